import { describe, expect, it } from 'vitest';
import { bundledGuides } from '../src/platform/guides/bundled.js';
import { toolsCalledIn } from '../src/platform/guides/service.js';
import { allOperations } from '../tools/index.js';
import { parseInput } from '../tools/validation.js';

const guides = bundledGuides().all();
const byName = new Map(allOperations.map((op) => [op.name as string, op]));

/** Each "Call `tool`" step with the json block that follows it. */
function calls(content: string): Array<{ tool: string; args: string | undefined }> {
  const steps = content.split(/\n(?=\d+\. )/);
  return steps.flatMap((step) => {
    const call = /^\d+\. Call `(\w+)`/.exec(step);
    if (!call) return [];
    return [{ tool: call[1]!, args: /```json\n([\s\S]*?)\n```/.exec(step)?.[1] }];
  });
}

describe('guides', () => {
  it('there are at least six, each with a heading, a summary and numbered steps', () => {
    expect(guides.length).toBeGreaterThanOrEqual(6);
    for (const guide of guides) {
      expect(guide.title).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(guide.heading.length, guide.title).toBeGreaterThan(5);
      expect(guide.summary.length, guide.title).toBeGreaterThan(30);
      expect(calls(guide.content).length, guide.title).toBeGreaterThanOrEqual(3);
    }
  });

  it.each(guides.map((g) => [g.title, g] as const))('%s names only tools of the table', (_title, guide) => {
    for (const tool of toolsCalledIn(guide.content)) expect(byName.has(tool), `${guide.title} calls ${tool}`).toBe(true);
    // Any `camelCase` word in backticks that looks like a tool name must be one.
    for (const [, word] of guide.content.matchAll(/`((?:get|create|update|execute|inspect|interact|deploy|call|activate|start)[A-Z]\w*)`/g)) {
      expect(byName.has(word!), `${guide.title} mentions ${word}`).toBe(true);
    }
  });

  it.each(guides.map((g) => [g.title, g] as const))('%s gives example arguments that the tool accepts', (_title, guide) => {
    for (const { tool, args } of calls(guide.content)) {
      expect(args, `${guide.title}: ${tool} has a json block`).toBeDefined();
      const parsed: unknown = JSON.parse(args!);
      expect(() => parseInput(byName.get(tool)!.input, parsed), `${guide.title}: ${tool} ${args}`).not.toThrow();
    }
  });
});

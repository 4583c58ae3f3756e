import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from './helpers/server.js';
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
    for (const [, word] of guide.content.matchAll(/`((?:get|create|update|execute|inspect|interact|deploy|call|activate|start|stop|delete|restart)[A-Z]\w*)`/g)) {
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

/** What removes what a tool creates (docs/design.md, "Lifecycle operations"). */
const REMOVERS: Record<string, string[]> = {
  createBackendApp: ['deleteBackendApp'],
  createWebApp: ['stopWebApp', 'startWebApp', 'deleteWebApp'],
  createDevelopmentEnvironment: ['deleteDevelopmentEnvironment'],
};
/** The lifecycle tools beyond the spec's 20. */
const LIFECYCLE = [...Object.values(REMOVERS).flat(), 'restartDevelopmentEnvironment', 'getCloudCodeVersions', 'rollbackCloudCode'];

describe('guides and the lifecycle tools', () => {
  it.each(guides.map((g) => [g.title, g] as const))('%s says how to remove what it creates', (_title, guide) => {
    const called = toolsCalledIn(guide.content);
    for (const [creator, removers] of Object.entries(REMOVERS)) {
      if (!called.includes(creator)) continue;
      for (const remover of removers) expect(guide.content, `${guide.title} calls ${creator} but never names ${remover}`).toContain(`\`${remover}\``);
    }
  });

  it('every lifecycle tool is called in a step of some guide, with arguments it accepts', () => {
    const calledSomewhere = new Set(guides.flatMap((g) => calls(g.content).map((c) => c.tool)));
    for (const tool of LIFECYCLE) expect(calledSomewhere.has(tool), tool).toBe(true);
  });
});

describe('guides as a server serves them', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('name the image of development environments, its install command and a Node base image, with no placeholder left', async () => {
    await server.platform.services.devenvs.surveyImages();
    const text = server.platform.services.devenvs.imageText();
    for (const guide of guides) {
      const res = await api(server, 'GET', `/guides/${guide.title}`, { token: server.alice });
      const { content } = res.json() as { content: string };
      expect(content, guide.title).not.toMatch(/\{(devenv_[a-z_]+(:[^}]*)?|node_base_image)\}/);
      if (guide.content.includes('{devenv_image}')) expect(content, guide.title).toContain(`\`${text.image}\``);
      if (guide.content.includes('FROM {node_base_image}')) expect(content, guide.title).toContain(`FROM ${text.nodeBaseImage}\\n`);
    }
    const commands = (await api(server, 'GET', '/guides/run-commands-in-a-development-environment', { token: server.alice })).json() as { content: string };
    expect(commands.content).toContain(`"command": "${text.installCommand!.replace('<package>', 'jq')}"`);
  });
});

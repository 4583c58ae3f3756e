import { McpServer, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { annotationsFor, type AnyOperation } from '../../tools/operation.js';
import { failureFor } from '../../tools/invoke.js';
import type { Logger } from '../log.js';
import type { GuideService } from '../platform/guides/service.js';
import { packageVersion } from '../version.js';
import type { Executor } from './executor.js';

const INSTRUCTIONS = [
  'Backyard runs apps on this machine for the person you are helping.',
  'Development environments: Alpine containers where you run shell commands.',
  'Backend Apps: data APIs speaking the Parse REST protocol, with cloud code and static hosting.',
  'Web Apps: containers built from a repository\'s Dockerfile.',
  'When unsure how to do something, call getGuide (or read the guide:// resources) and follow its steps.',
  'Give the person the URLs the tools return (dashboardURL, publicWebHostingURL, appURL).',
].join(' ');

/**
 * The advertised input schema of a tool, without the SDK's own validation: arguments are validated
 * by `invokeOperation`, the same check the REST API makes, so that an MCP `isError` carries exactly
 * the text of the REST 400.
 */
function advertisedOnly(schema: z.ZodObject): StandardSchemaWithJSON {
  const standard = schema['~standard'];
  return {
    '~standard': {
      version: 1,
      vendor: 'backyard',
      validate: (value: unknown) => ({ value }),
      jsonSchema: standard.jsonSchema,
    },
  } as unknown as StandardSchemaWithJSON;
}

/**
 * Builds an MCP server from the operation table (issue 2, item 6): one tool per built operation,
 * with title, description, input and output schemas and annotations; results as
 * `structuredContent` plus the same JSON as text; failures as `isError` with the REST error text.
 * Guides are also resources (`guide://<title>`) and prompts.
 */
export function createMcpServer(
  ops: readonly AnyOperation[],
  execute: Executor,
  guides: GuideService,
  log: Logger,
  /** Fills this server's addresses into descriptions and guides (urls.ts, `fillAddresses`). */
  fill: (text: string) => string = (text) => text,
): McpServer {
  const server = new McpServer(
    { name: 'backyard', title: 'Backyard', version: packageVersion() },
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {}, prompts: {} } },
  );
  for (const op of ops) {
    server.registerTool(
      op.name,
      {
        title: op.title,
        description: fill(op.description),
        inputSchema: advertisedOnly(op.input),
        outputSchema: op.output,
        annotations: annotationsFor(op),
      },
      async (args: unknown, ctx) => {
        try {
          const output = await execute(op, args, ctx.mcpReq.signal);
          return { content: [{ type: 'text' as const, text: JSON.stringify(output) }], structuredContent: output };
        } catch (error) {
          const failure = failureFor(error, op);
          if (failure.internal) log.error({ err: error, tool: op.name }, 'tool failed');
          return { isError: true, content: [{ type: 'text' as const, text: failure.text }] };
        }
      },
    );
  }
  for (const guide of guides.all()) {
    const uri = `guide://${guide.title}`;
    server.registerResource(
      guide.title,
      uri,
      { title: guide.heading, description: guide.summary, mimeType: 'text/markdown' },
      async () => ({ contents: [{ uri, mimeType: 'text/markdown', text: fill(guide.content) }] }),
    );
    server.registerPrompt(guide.title, { title: guide.heading, description: guide.summary }, async () => ({
      description: guide.summary,
      messages: [
        {
          role: 'user' as const,
          content: { type: 'text' as const, text: `Follow this Backyard guide step by step, calling the tools it names.\n\n${fill(guide.content)}` },
        },
      ],
    }));
  }
  return server;
}

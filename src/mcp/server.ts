import { McpServer, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { annotationsFor, type AnyOperation } from '../../tools/operation.js';
import { offered } from '../../tools/limits.js';
import { failureFor } from '../../tools/invoke.js';
import type { Logger } from '../log.js';
import type { GuideOperations } from '../platform/services.js';
import { packageVersion } from '../version.js';
import type { Executor } from './executor.js';
import type { McpProfile } from './profile.js';
import { compactSchema } from './schemas.js';

const INSTRUCTIONS = [
  'Backyard runs apps on this machine for the person you are helping.',
  'Development environments: Linux containers where you run shell commands.',
  'Backend Apps: data APIs speaking the Parse REST protocol, with cloud code and static hosting.',
  "Web Apps: containers built from a repository's Dockerfile.",
  'When unsure how to do something, call getGuide (or read the guide:// resources) and follow its steps.',
  'Give the person the URLs the tools return (dashboardURL, publicWebHostingURL, appURL).',
  'A call with a progressToken hears progress: executeCommand its output while it waits; createWebApp and startDeployment then follow the deployment to its end (up to 50 s) instead of answering at once.',
].join(' ');

/** The instructions, with what this connection is limited to. */
function instructionsFor(profile: McpProfile): string {
  const { limits } = profile;
  const notes = [INSTRUCTIONS];
  if (limits.appId) notes.push(`This connection reaches only the Backend App ${limits.appId}: pass appId "${limits.appId}".`);
  if (limits.readOnly) notes.push(`Tools that change things are refused: ${limits.readOnly}`);
  return notes.join(' ');
}

/**
 * The advertised input schema of a tool, without the SDK's own validation: arguments are validated
 * by `invokeOperation`, the same check the REST API makes, so that an MCP `isError` carries exactly
 * the text of the REST 400. The JSON Schema is compacted (schemas.ts).
 */
function advertisedOnly(schema: z.ZodObject): StandardSchemaWithJSON {
  const standard = schema['~standard'] as unknown as { jsonSchema: { input: (o: unknown) => Record<string, unknown>; output: (o: unknown) => Record<string, unknown> } };
  return {
    '~standard': {
      version: 1,
      vendor: 'backyard',
      validate: (value: unknown) => ({ value }),
      jsonSchema: {
        input: (options: unknown) => compactSchema(standard.jsonSchema.input(options)),
        output: (options: unknown) => compactSchema(standard.jsonSchema.output(options)),
      },
    },
  } as unknown as StandardSchemaWithJSON;
}

/** The hints' values when absent (MCP revision 2025-11-25, "ToolAnnotations"). */
const DEFAULT_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

/**
 * An operation's MCP annotations as sent: only the hints that differ from their defaults (and, for
 * a read-only tool, neither destructiveHint nor idempotentHint, which apply to changes only), and no
 * `title`, which the tool carries already (MCP "Tool": the tool's `title` takes precedence).
 */
export function hintsOf(op: AnyOperation): Partial<typeof DEFAULT_HINTS> {
  const { title: _title, ...hints } = annotationsFor(op);
  // destructiveHint and idempotentHint mean something only for a tool that changes things.
  const relevant = hints.readOnlyHint ? { readOnlyHint: true, openWorldHint: hints.openWorldHint } : hints;
  return Object.fromEntries(Object.entries(relevant).filter(([k, v]) => DEFAULT_HINTS[k as keyof typeof DEFAULT_HINTS] !== v));
}

/** What a tool handler sees of its request (the v2 SDK's `ctx.mcpReq`), as far as progress goes. */
interface ProgressRequest {
  _meta?: { progressToken?: string | number };
  notify: (notification: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message: string } }) => Promise<void>;
}

/**
 * A reporter that sends `notifications/progress` for the call's `progressToken` (MCP "Progress":
 * `progress` increases with each notification; no `total`, since the steps are not known ahead), or
 * undefined when the call carries no token. A notification that cannot be sent is logged, never thrown.
 */
function progressReporter(request: ProgressRequest, log: Logger): ((message: string) => void) | undefined {
  const token = request._meta?.progressToken;
  if (token === undefined) return undefined;
  let progress = 0;
  return (message) => {
    progress += 1;
    request.notify({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch((err: unknown) => log.debug({ err }, 'progress notification not sent'));
  };
}

/**
 * Builds an MCP server from the operation table: one tool per operation
 * the connection's profile offers (McpProfile, tools/limits.ts), with title, description, a compact
 * input schema and annotations. Results are `structuredContent` plus the same JSON as text, except
 * operations with `textResult` (a guide, cloud code), which answer that text alone. No output
 * schemas are advertised: they were half of `tools/list`, and the REST API's OpenAPI document keeps
 * them. Failures are `isError` with the REST error text. Guides are also
 * resources (`guide://<title>`) and prompts, unless the connection leaves the guides out.
 */
export function createMcpServer(
  ops: readonly AnyOperation[],
  execute: Executor,
  guides: GuideOperations,
  log: Logger,
  /** Fills this server's addresses into descriptions and guides (urls.ts, `fillAddresses`). */
  fill: (text: string) => string = (text) => text,
  profile: McpProfile = { limits: {}, hideReadOnly: false },
): McpServer {
  const server = new McpServer(
    { name: 'backyard', title: 'Backyard', version: packageVersion() },
    { instructions: instructionsFor(profile), capabilities: { tools: {}, resources: {}, prompts: {} } },
  );
  for (const op of ops.filter((o) => offered(o, profile.limits, profile.hideReadOnly))) {
    server.registerTool(
      op.name,
      { title: op.title, description: fill(op.description), inputSchema: advertisedOnly(op.input), annotations: hintsOf(op) },
      async (args: unknown, ctx) => {
        try {
          const output = await execute(op, args, ctx.mcpReq.signal, progressReporter(ctx.mcpReq, log));
          if (op.textResult) return { content: [{ type: 'text' as const, text: String(output[op.textResult]) }] };
          return { content: [{ type: 'text' as const, text: JSON.stringify(output) }], structuredContent: output };
        } catch (error) {
          const failure = failureFor(error, op);
          if (failure.internal) log.error({ err: error, tool: op.name }, 'tool failed');
          return { isError: true, content: [{ type: 'text' as const, text: failure.text }] };
        }
      },
    );
  }
  if (profile.limits.features && !profile.limits.features.has('guides')) return server;
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

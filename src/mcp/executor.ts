import type { AnyOperation, OperationContext } from '../../tools/operation.js';
import { invokeOperation } from '../../tools/invoke.js';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { ManagementError } from '../errors.js';
import { packageVersion } from '../version.js';

/**
 * Carries out an operation for the MCP front end: in this process (`localExecutor`) or on a
 * Backyard already running on the same home (`remoteExecutor`, used by `backyard mcp` when the
 * port is held by that server). Throws ManagementError for what the caller should read.
 */
export type Executor = (
  op: AnyOperation,
  args: unknown,
  signal: AbortSignal | undefined,
  /** Reports progress to the client (OperationContext.progress); undefined when it follows none. */
  progress?: (message: string) => void,
) => Promise<Record<string, unknown>>;

/** Runs operations in this process as the account of `ctx`, within its limits. */
export const localExecutor =
  (ctx: Omit<OperationContext, 'signal'>): Executor =>
  (op, args, signal, progress) =>
    invokeOperation(op, args, { ...ctx, signal, progress });

/** An Executor that forwards to another Backyard, and the means to let go of its connection. */
export interface RemoteExecutor {
  execute: Executor;
  close(): Promise<void>;
}

/** Long enough for an image pull or a build; progress notifications restart it. */
const FORWARD_TIMEOUT_MS = 30 * 60_000;

/**
 * Runs operations on the Backyard serving `mcpUrl` (`<public url>/mcp`) over MCP itself, as the
 * account of `token`, so that what the server sends about a call comes through: its progress
 * notifications (MCP "Progress") are handed to `progress`, and `signal` becomes a cancellation
 * (MCP "Cancellation"). The server's result is answered as it came: `structuredContent`, or the text
 * of an operation with `textResult`; an `isError` result becomes a ManagementError with the server's
 * text, which the local MCP server answers unchanged. One client is connected at the first call and
 * again after a failure to reach the server (which may have restarted).
 * @throws ManagementError `unavailable` when the server cannot be reached or answers no tool result.
 */
export function remoteExecutor(mcpUrl: string, token: string): RemoteExecutor {
  let connected: Promise<Client> | undefined;
  const connect = async () => {
    const client = new Client({ name: 'backyard-mcp-forwarder', version: packageVersion() });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };
  const execute: Executor = async (op, args, signal, progress) => {
    let result: CallToolResult;
    try {
      connected ??= connect();
      const client = await connected;
      result = (await client.callTool(
        { name: op.name, arguments: args as Record<string, unknown> },
        {
          signal,
          timeout: FORWARD_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          onprogress: progress && ((p) => progress(p.message ?? `step ${p.progress}`)),
        },
      )) as CallToolResult;
    } catch (error) {
      if (signal?.aborted) throw error;
      const stale = connected;
      connected = undefined;
      void stale?.then((c) => c.close()).catch(() => undefined);
      throw new ManagementError('unavailable', `The Backyard serving ${mcpUrl} did not answer ${op.name}: ${(error as Error).message}`);
    }
    const text = result.content?.find((c): c is { type: 'text'; text: string } => c.type === 'text')?.text ?? '';
    if (result.isError) throw new ManagementError('invalid', text);
    if (op.textResult) return { [op.textResult]: text };
    if (result.structuredContent) return result.structuredContent as Record<string, unknown>;
    throw new ManagementError('unavailable', `The Backyard serving ${mcpUrl} answered ${op.name} without a result.`);
  };
  return {
    execute,
    close: async () => {
      const client = await connected?.catch(() => undefined);
      connected = undefined;
      await client?.close().catch(() => undefined);
    },
  };
}

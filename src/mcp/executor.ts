import type { AnyOperation, OperationContext } from '../../tools/operation.js';
import { invokeOperation } from '../../tools/invoke.js';
import { ManagementError, type ErrorKind } from '../errors.js';
import { pathParams } from '../../tools/operation.js';

/**
 * Carries out an operation for the MCP front end: in this process (`localExecutor`) or on a
 * Backyard already running on the same home (`remoteExecutor`, used by `backyard mcp` when the
 * port is held by that server).
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

const kindOfStatus: Record<number, ErrorKind> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'notFound',
};

/**
 * Runs operations through the management REST API at `baseUrl` (`<public url>/v1`) with a bearer
 * token, turning the flat input back into path, query and body as the table says, and REST errors
 * back into ManagementErrors carrying the server's text. REST carries no progress: a forwarded call
 * answers as it would without a progressToken.
 */
export const remoteExecutor =
  (baseUrl: string, token: string): Executor =>
  async (op, args, signal) => {
    const input = { ...(args as Record<string, unknown>) };
    let path = op.path;
    for (const name of pathParams(op)) {
      path = path.replace(`{${name}}`, encodeURIComponent(String(input[name] ?? '')));
    }
    const query = new URLSearchParams();
    for (const [restName, field] of Object.entries(op.query ?? {})) {
      if (input[field] !== undefined) query.set(restName, String(input[field]));
    }
    const known = new Set([...pathParams(op), ...Object.values(op.query ?? {})]);
    // Fields outside path and query go in the body, unknown ones too, so the server refuses them by name.
    const body = Object.fromEntries(Object.entries(input).filter(([k]) => !known.has(k)));
    const url = `${baseUrl}${path}${query.size ? `?${query}` : ''}`;
    const response = await fetch(url, {
      method: op.method,
      headers: { authorization: `Bearer ${token}`, ...(op.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
      body: op.method === 'GET' ? undefined : JSON.stringify(body),
      signal,
    });
    const text = await response.text();
    if (!response.ok) throw new ManagementError(kindOfStatus[response.status] ?? 'unavailable', text);
    if (op.restBody?.text) return { [op.restBody.key]: text };
    const json: unknown = JSON.parse(text);
    return op.restBody ? { [op.restBody.key]: json } : (json as Record<string, unknown>);
  };

import { annotationsFor } from '../../tools/operation.js';
import { forbidden } from '../errors.js';
import { READ_SCOPE, WRITE_SCOPE, allowsWrites } from '../platform/oauth/scopes.js';
import type { Executor } from './executor.js';

/**
 * An executor that, under a read-only grant (`mcp:read` without `mcp:write`, issue 15), refuses
 * every tool whose annotations are not `readOnlyHint` (`annotationsFor`, the one place that decides
 * hints) with a text naming the scope; other calls go to `execute`. The refusal is an MCP tool
 * error (`isError`), so the assistant can tell the person what to change.
 */
export function scopedExecutor(execute: Executor, scopes: readonly string[]): Executor {
  if (allowsWrites(scopes)) return execute;
  return (op, args, signal) => {
    if (!annotationsFor(op).readOnlyHint) {
      return Promise.reject(
        forbidden(
          `${op.name} changes things, and this connection was granted read-only access (${READ_SCOPE}). ` +
            `Calling it needs the scope ${WRITE_SCOPE}: ask the person to connect again and choose full access on Backyard's consent page.`,
        ),
      );
    }
    return execute(op, args, signal);
  };
}

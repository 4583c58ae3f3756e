import { READ_SCOPE, WRITE_SCOPE, allowsWrites } from '../platform/oauth/scopes.js';

/**
 * The read-only limit of an OAuth grant (`mcp:read` without `mcp:write`), as the sentence
 * that tools changing things are refused with (tools/limits.ts), or undefined for a full grant.
 */
export function readOnlyGrant(scopes: readonly string[]): string | undefined {
  if (allowsWrites(scopes)) return undefined;
  return (
    `this connection was granted read-only access (${READ_SCOPE}). ` +
    `Calling it needs the scope ${WRITE_SCOPE}: ask the person to connect again and choose full access on Backyard's consent page.`
  );
}

/**
 * The scopes of Backyard's MCP server: `mcp:read` lets a client call the tools whose
 * annotations say `readOnlyHint`; `mcp:write` lets it call every tool. A full grant carries both.
 */
export const READ_SCOPE = 'mcp:read';
export const WRITE_SCOPE = 'mcp:write';
export const SCOPES = [READ_SCOPE, WRITE_SCOPE] as const;
export type Scope = (typeof SCOPES)[number];

/** What a person picks on the consent page. */
export type Access = 'read' | 'full';

/** The scopes a grant of `access` carries. */
export const scopesFor = (access: Access): Scope[] => (access === 'full' ? [READ_SCOPE, WRITE_SCOPE] : [READ_SCOPE]);

/**
 * What a request for `scopes` may be granted: `mcp:write` lets a client call every tool, the
 * read-only ones too, so a request for it covers `mcp:read` as well and a person may narrow it to
 * read-only (RFC 6749 §3.3: the server may issue less than asked at the resource owner's word, and
 * says so in the token response's `scope`).
 */
export const grantable = (scopes: readonly Scope[]): Scope[] => (scopes.includes(WRITE_SCOPE) ? [READ_SCOPE, WRITE_SCOPE] : [...scopes]);

/** Whether `scopes` allow calling tools that change things. */
export const allowsWrites = (scopes: readonly string[]): boolean => scopes.includes(WRITE_SCOPE);

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/**
 * Splits a `scope` parameter (RFC 6749 §3.3: space-delimited, case-sensitive) into Backyard's scopes
 * and the others, which the authorization server ignores (RFC 6749 §3.3 lets it narrow a request).
 * An absent or empty parameter asks for every scope.
 */
export function parseScope(text: string | undefined): { scopes: Scope[]; unknown: string[] } {
  const words = (text ?? '').split(' ').filter((w) => w !== '');
  if (words.length === 0) return { scopes: [...SCOPES], unknown: [] };
  const scopes = SCOPES.filter((s) => words.includes(s));
  return { scopes, unknown: words.filter((w) => !isScope(w)) };
}

/** A scope list as the `scope` parameter of a token response (RFC 6749 §5.1). */
export const scopeText = (scopes: readonly string[]): string => SCOPES.filter((s) => scopes.includes(s)).join(' ');

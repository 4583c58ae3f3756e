import type { PublicUrls } from '../platform/urls.js';
import { SCOPES } from '../platform/oauth/scopes.js';

/** Where the protected resource metadata of `/mcp` answers (RFC 9728 §3.1: the path-suffixed well-known URL). */
export const resourceMetadataUrl = (urls: PublicUrls): string => `${urls.base}/.well-known/oauth-protected-resource${new URL(urls.mcp).pathname}`;

/** A quoted-string value of an HTTP auth parameter (RFC 9110 §5.6.4). */
const quoted = (value: string): string => `"${value.replace(/[\\"]/g, '\\$&').replace(/[\r\n]/g, ' ')}"`;

/**
 * The `WWW-Authenticate` challenge of a 401 from `/mcp` (RFC 6750 §3; RFC 9728 §5.1; MCP
 * "Authorization", "Protected Resource Metadata Discovery Requirements"): where the resource
 * metadata is and which scopes to ask for, and, when a token was sent, `error="invalid_token"`.
 */
export function bearerChallenge(urls: PublicUrls, invalidToken?: string): string {
  const parts = [`resource_metadata=${quoted(resourceMetadataUrl(urls))}`, `scope=${quoted(SCOPES.join(' '))}`];
  if (invalidToken !== undefined) parts.push(`error="invalid_token"`, `error_description=${quoted(invalidToken)}`);
  return `Bearer ${parts.join(', ')}`;
}

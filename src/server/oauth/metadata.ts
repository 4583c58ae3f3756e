import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/server';
import type { PublicUrls } from '../../platform/urls.js';
import { SCOPES } from '../../platform/oauth/scopes.js';

/** Where Backyard's OAuth endpoints answer, under the public URL. */
export const OAUTH_PATHS = {
  /** A dashboard page: the session cookie (Path=/dashboard) reaches it. */
  authorize: '/dashboard/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
} as const;

/** Where the protected resource metadata of `/mcp` answers (RFC 9728 §3.1: the path-suffixed well-known URL). */
export const resourceMetadataUrl = (urls: PublicUrls): string => `${urls.base}/.well-known/oauth-protected-resource${new URL(urls.mcp).pathname}`;

/**
 * The protected resource metadata of `/mcp` (RFC 9728 §2; MCP "Authorization", "Authorization
 * Server Location"): the resource is `<public url>/mcp`, its authorization server is Backyard itself.
 */
export function protectedResourceMetadata(urls: PublicUrls): OAuthProtectedResourceMetadata {
  return {
    resource: urls.mcp,
    authorization_servers: [urls.base],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Backyard',
  };
}

/**
 * The authorization server metadata (RFC 8414 §2; MCP "Authorization", "Authorization Server
 * Metadata Discovery"): authorization code with PKCE S256 only, public clients (`none`), Client ID
 * Metadata Documents and Dynamic Client Registration, revocation, and `iss` in authorization
 * responses (RFC 9207).
 */
export function authorizationServerMetadata(urls: PublicUrls): OAuthMetadata {
  const base = urls.base;
  return {
    issuer: base,
    authorization_endpoint: `${base}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${base}${OAUTH_PATHS.token}`,
    registration_endpoint: `${base}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${base}${OAUTH_PATHS.revoke}`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

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

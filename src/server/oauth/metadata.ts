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

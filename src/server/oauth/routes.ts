import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { Platform } from '../../platform/platform.js';
import { sendOAuthError, singleValues } from './errors.js';
import { OAUTH_PATHS, authorizationServerMetadata, protectedResourceMetadata } from './metadata.js';

type Fields = Record<string, string | string[]>;

/** The fields of a form-encoded body; repeated names keep every value (refused later by `singleValues`). */
function parseForm(body: string): Fields {
  const fields: Fields = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const before = fields[key];
    fields[key] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
  }
  return fields;
}

/** The form fields of a token or revocation request. @throws OAuthError `invalid_request` for another body. */
function formOf(request: FastifyRequest): Record<string, string | undefined> {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body) || !String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    throw new OAuthError(OAuthErrorCode.InvalidRequest, 'Send the parameters as application/x-www-form-urlencoded (RFC 6749 §4.1.3).');
  }
  return singleValues(body as Fields);
}

/** CORS for the endpoints that browser-based MCP clients call: no cookies are involved, so any origin may. */
function allowAnyOrigin(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  reply.header('access-control-allow-origin', '*');
  if (request.method !== 'OPTIONS') return undefined;
  return reply
    .code(204)
    .header('access-control-allow-methods', 'GET, POST, OPTIONS')
    .header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version')
    .header('access-control-max-age', '600')
    .send();
}

/**
 * The OAuth endpoints of Backyard as the authorization server of its MCP server (MCP
 * "Authorization", revisions 2025-11-25 and 2026-07-28), registered at the root:
 * - `GET /.well-known/oauth-protected-resource` and `…/oauth-protected-resource/mcp` (RFC 9728);
 * - `GET /.well-known/oauth-authorization-server` (RFC 8414);
 * - `POST /oauth/register` (RFC 7591), `POST /oauth/token` (authorization_code with PKCE,
 *   refresh_token; OAuth 2.1 §3.2), `POST /oauth/revoke` (RFC 7009).
 * The authorization endpoint is a dashboard page (src/server/dashboard/authorize.ts). Errors are
 * `{ error, error_description }` JSON (RFC 6749 §5.2). OpenID Connect discovery is not answered:
 * Backyard issues no ID tokens.
 */
export function oauthEndpoints(platform: Platform) {
  const oauth = platform.services.oauth;
  const { urls } = platform.services;
  const { log } = platform;
  return async (app: FastifyInstance) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) =>
      done(null, parseForm(body as string)),
    );
    app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(new OAuthError(OAuthErrorCode.InvalidClientMetadata, 'The request body is not valid JSON.'), undefined);
      }
    });
    // Fastify's own refusals (unsupported media type, too large a body) in OAuth's shape.
    app.setErrorHandler((error, _request, reply) => {
      if (error instanceof OAuthError) return sendOAuthError(reply, error, log);
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      if (status >= 500) return sendOAuthError(reply, error, log);
      return sendOAuthError(reply, new OAuthError(OAuthErrorCode.InvalidRequest, `The request cannot be read: ${error instanceof Error ? error.message : 'malformed'}.`), log);
    });
    app.addHook('onRequest', async (request, reply) => {
      allowAnyOrigin(request, reply);
    });
    const preflight = (_request: FastifyRequest, reply: FastifyReply) => reply.code(204).send();

    const resourceMetadata = (_request: FastifyRequest, reply: FastifyReply) => reply.type('application/json; charset=utf-8').send(protectedResourceMetadata(urls));
    app.get('/.well-known/oauth-protected-resource', resourceMetadata);
    app.get('/.well-known/oauth-protected-resource/mcp', resourceMetadata);
    app.get('/.well-known/oauth-authorization-server', (_request, reply) => reply.type('application/json; charset=utf-8').send(authorizationServerMetadata(urls)));
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server', OAUTH_PATHS.register, OAUTH_PATHS.token, OAUTH_PATHS.revoke]) {
      app.options(path, preflight);
    }

    app.post(OAUTH_PATHS.register, async (request, reply) => {
      if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) {
        throw new OAuthError(OAuthErrorCode.InvalidClientMetadata, 'Send the client metadata as application/json (RFC 7591 §3.1).');
      }
      const registered = await oauth.clients.register(request.body);
      return reply.code(201).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(registered);
    });

    app.post(OAUTH_PATHS.token, async (request, reply) => {
      const form = formOf(request);
      let tokens;
      switch (form.grant_type) {
        case 'authorization_code':
          tokens = await oauth.exchangeCode(form);
          break;
        case 'refresh_token':
          tokens = await oauth.refresh(form);
          break;
        case undefined:
          throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no grant_type.');
        default:
          throw new OAuthError(OAuthErrorCode.UnsupportedGrantType, `The grant type ${form.grant_type} is not supported: use authorization_code or refresh_token.`);
      }
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/json; charset=utf-8').send(tokens);
    });

    app.post(OAUTH_PATHS.revoke, async (request, reply) => {
      await oauth.revoke(formOf(request));
      return reply.header('cache-control', 'no-store').code(200).send();
    });
  };
}

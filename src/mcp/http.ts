import { fillAddresses } from '../platform/urls.js';
import type { FastifyInstance } from 'fastify';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { AnyOperation } from '../../tools/operation.js';
import { authenticateBearer } from '../api/auth.js';
import { ManagementError } from '../errors.js';
import type { Account } from '../platform/accounts/service.js';
import type { Platform } from '../platform/platform.js';
import { localExecutor } from './executor.js';
import { createMcpServer } from './server.js';
import { profileFromQuery, type McpProfile } from './profile.js';
import { readOnlyGrant } from './scopes.js';
import { narrow, type CallerLimits } from '../../tools/limits.js';
import { ACCESS_TOKEN_PREFIX } from '../platform/oauth/service.js';
import { SCOPES } from '../platform/oauth/scopes.js';
import { bearerChallenge } from './challenge.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Whether a browser `Origin` may call `/mcp`: the server's own public origin, the same port on a
 * loopback name, or one listed in `BACKYARD_ALLOWED_ORIGINS`. Requests without `Origin` (not from a
 * browser) pass. The MCP transport rules require refusing other origins (DNS rebinding).
 */
export function originAllowed(origin: string | undefined, publicBase: string, extra: readonly string[]): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const own = new URL(publicBase);
  if (url.origin === own.origin) return true;
  if (LOOPBACK.has(url.hostname) && LOOPBACK.has(own.hostname) && url.port === own.port && url.protocol === own.protocol) return true;
  return extra.some((o) => new URL(o).origin === url.origin);
}

/** Whether the `Host` header names this server: its public host or a loopback name (any port). */
export function hostAllowed(host: string | undefined, publicBase: string): boolean {
  if (!host) return false;
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return LOOPBACK.has(hostname.toLowerCase()) || hostname.toLowerCase() === new URL(publicBase).hostname.toLowerCase();
}

/** Who a request to `/mcp` acts as, which scopes it holds (all of them for an account token) and what its credentials allow. */
interface Caller {
  account: Account;
  clientId: string;
  scopes: readonly string[];
  limits: CallerLimits;
}

/**
 * The caller of a `/mcp` request from its `Authorization: Bearer` header: an OAuth access token
 * (`bya_…`) issued by this server for its `/mcp`, or an account token (docs/design.md,
 * decision 2), which scripts and `backyard mcp` forwarding keep using with full access.
 * @returns `{ refused }` with the 401's text and whether a token was presented (then the challenge
 *   says `invalid_token`, RFC 6750 §3.1).
 */
async function callerOf(header: string | undefined, platform: Platform): Promise<Caller | { refused: string; tokenSent: boolean }> {
  const token = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  if (token?.startsWith(ACCESS_TOKEN_PREFIX)) {
    const access = await platform.services.oauth.verifyAccessToken(token);
    if ('problem' in access) return { refused: access.problem, tokenSent: true };
    return { account: access.account, clientId: access.clientId, scopes: access.scopes, limits: { readOnly: readOnlyGrant(access.scopes) } };
  }
  try {
    const { account, limits } = await authenticateBearer(header, platform.services.accounts);
    return { account, clientId: account.login, scopes: SCOPES, limits };
  } catch (error) {
    return { refused: error instanceof ManagementError ? error.message : 'Unauthorized.', tokenSent: token !== undefined };
  }
}

/**
 * MCP over streamable HTTP at `/mcp`: bearer authentication (401 with the challenge of MCP
 * "Authorization": `resource_metadata` and `scope`), 403 for a foreign `Origin` or `Host`, then the
 * SDK's handler, which serves revision 2026-07-28 and, statelessly, 2025-era clients. Each request
 * gets a server built for the caller's account; under a read-only grant, tools that change things
 * answer an error naming the scope they need.
 */
export function mcpHttp(platform: Platform, ops: readonly AnyOperation[]) {
  const { services, log, config } = platform;
  const handler = toNodeHandler(
    createMcpHandler(({ authInfo }) => {
      const account = authInfo?.extra?.account as Account;
      const profile = authInfo?.extra?.profile as McpProfile;
      const execute = localExecutor({ account, services, limits: profile.limits });
      return createMcpServer(ops, execute, services.guides, log, (text) => fillAddresses(text, services.urls), profile);
    }),
    { onerror: (err) => log.error({ err }, 'MCP HTTP adapter failure') },
  );
  return async (app: FastifyInstance) => {
    app.removeContentTypeParser('application/json');
    // The SDK reads and checks the body itself; hand it over untouched.
    app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    app.addContentTypeParser('application/json', (_req, _payload, done) => done(null, undefined));
    app.all('/mcp', async (request, reply) => {
      const base = services.urls.base;
      if (!originAllowed(request.headers.origin, base, config.allowedOrigins)) {
        return reply.code(403).type('text/plain; charset=utf-8').send(`Origin ${request.headers.origin} is not allowed to call this MCP server.`);
      }
      if (!hostAllowed(request.headers.host, base)) {
        return reply.code(403).type('text/plain; charset=utf-8').send(`Host ${request.headers.host} is not served here.`);
      }
      const caller = await callerOf(request.headers.authorization, platform);
      if ('refused' in caller) {
        return reply
          .code(401)
          .header('WWW-Authenticate', bearerChallenge(services.urls, caller.tokenSent ? caller.refused : undefined))
          .type('text/plain; charset=utf-8')
          .send(caller.refused);
      }
      const asked = profileFromQuery(request.query as Record<string, unknown>);
      if ('problem' in asked) return reply.code(400).type('text/plain; charset=utf-8').send(asked.problem);
      const profile: McpProfile = { limits: narrow(caller.limits, asked.limits), hideReadOnly: asked.hideReadOnly };
      reply.hijack();
      const raw = request.raw as typeof request.raw & { auth?: AuthInfo };
      raw.auth = { token: 'redacted', clientId: caller.clientId, scopes: [...caller.scopes], extra: { account: caller.account, profile } };
      await handler(raw, reply.raw);
    });
  };
}

import type { FastifyReply } from 'fastify';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { Logger } from '../../log.js';

/** RFC 6749 §5.2 and RFC 7591 §3.2.2: 401 for a client that failed to authenticate, 400 otherwise. */
const statusOf = (code: string): number => (code === OAuthErrorCode.InvalidClient ? 401 : code === OAuthErrorCode.ServerError ? 500 : 400);

/**
 * Answers an OAuth endpoint's failure as `{ "error", "error_description" }` JSON (RFC 6749 §5.2),
 * never with a stack trace: an `OAuthError` with its code, anything else as `server_error` (logged).
 */
export function sendOAuthError(reply: FastifyReply, error: unknown, log: Logger): FastifyReply {
  const oauth =
    error instanceof OAuthError ? error : new OAuthError(OAuthErrorCode.ServerError, 'Backyard failed to complete the request because of an internal error.');
  if (!(error instanceof OAuthError)) log.error({ err: error }, 'OAuth endpoint failure');
  return reply
    .code(statusOf(oauth.code))
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send({ error: oauth.code, error_description: oauth.message });
}

/**
 * The parameters of a form-encoded OAuth request, one value each.
 * @throws OAuthError `invalid_request` when a parameter is repeated (RFC 6749 §3.1, §3.2).
 */
export function singleValues(fields: Record<string, string | string[]>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) throw new OAuthError(OAuthErrorCode.InvalidRequest, `The parameter ${key} is repeated.`);
    out[key] = value;
  }
  return out;
}

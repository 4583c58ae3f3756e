import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import { askProvider } from './http.js';
import { refused } from './idToken.js';
import type { OutboundFetch, OutboundInit } from '../../../shared/outbound/client.js';

/** A provider that signs in with an OAuth authorization code (Parse Server 9's BaseCodeAuthAdapter). */
export interface CodeFlow {
  label: string;
  tokenUrl: string;
  userUrl: string;
  /** How the provider's token endpoint takes the exchange: GitHub JSON, Microsoft a form with grant_type. */
  form: 'github' | 'microsoft';
}

export interface CodeOptions {
  clientId?: string;
  clientSecret?: string;
  enableInsecureAuth?: boolean;
}

/**
 * Verifies `authData` of a code provider as Parse Server 9 does (`beforeFind`): `{code,
 * redirect_uri?}` is exchanged for an access token at `tokenUrl` with the app's client id and secret,
 * and the token reads the user at `userUrl`; with `enableInsecureAuth`, `{id, access_token}` is
 * checked against `userUrl` alone.
 * @returns the data to keep: `{id, access_token}` (the id as the provider gives it).
 * @throws ParseError 142 "<Provider> code is required." without a code; 101 when the exchange or the
 *   user lookup fails, or the user is not `id`.
 */
export async function verifyCode(flow: CodeFlow, data: Record<string, unknown>, options: CodeOptions, fetch: OutboundFetch): Promise<Record<string, unknown>> {
  const invalid = () => refused(`${flow.label} auth is invalid for this user.`);
  if (options.enableInsecureAuth && !data.code) {
    if (typeof data.access_token !== 'string' || !data.access_token) throw invalid();
    const user = await readUser(flow, data.access_token, fetch);
    if (String(user.id) !== String(data.id)) throw invalid();
    return { id: user.id, access_token: data.access_token };
  }
  if (typeof data.code !== 'string' || !data.code) throw new ParseError(ParseCode.VALIDATION_ERROR, `${flow.label} code is required.`);
  const accessToken = await exchange(flow, data, options, fetch);
  const user = await readUser(flow, accessToken, fetch);
  if (data.id !== undefined && String(user.id) !== String(data.id)) throw invalid();
  return { id: user.id, access_token: accessToken };
}

async function exchange(flow: CodeFlow, data: Record<string, unknown>, options: CodeOptions, fetch: OutboundFetch): Promise<string> {
  const request: OutboundInit =
    flow.form === 'github'
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ client_id: options.clientId, client_secret: options.clientSecret, code: data.code }),
        }
      : {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({
            client_id: options.clientId ?? '',
            client_secret: options.clientSecret ?? '',
            grant_type: 'authorization_code',
            code: String(data.code),
            ...(typeof data.redirect_uri === 'string' ? { redirect_uri: data.redirect_uri } : {}),
          }).toString(),
        };
  const { ok, status, body } = await askProvider(fetch, flow.label, flow.tokenUrl, request);
  const answer = isPlainObject(body) ? body : {};
  if (typeof answer.error === 'string') throw refused(typeof answer.error_description === 'string' ? answer.error_description : answer.error);
  if (!ok || typeof answer.access_token !== 'string') throw refused(`${flow.label} did not exchange the code for a token (HTTP ${status}).`);
  return answer.access_token;
}

async function readUser(flow: CodeFlow, accessToken: string, fetch: OutboundFetch): Promise<{ id: string | number }> {
  const { ok, body } = await askProvider(fetch, flow.label, flow.userUrl, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
  if (!ok || !isPlainObject(body) || (typeof body.id !== 'string' && typeof body.id !== 'number') || body.id === '') {
    throw refused(`${flow.label} auth is invalid for this user.`);
  }
  return { id: body.id };
}

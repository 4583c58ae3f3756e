import crypto from 'node:crypto';
import { isPlainObject } from '../../values.js';
import { askProvider } from './http.js';
import { refused, type IdTokens } from './idToken.js';
import type { z } from 'zod';
import type { facebookOptions } from './options.js';
import type { OutboundFetch } from '../../../shared/outbound/client.js';

export const FACEBOOK_ISSUER = 'https://www.facebook.com';
const FACEBOOK_KEYS = 'https://www.facebook.com/.well-known/oauth/openid/jwks/';
const FACEBOOK_GRAPH = 'https://graph.facebook.com/';

/**
 * Verifies Facebook `authData` as Parse Server 9's facebook.js: a Limited Login `{id, token}` is an
 * ID token checked against Facebook's keys with the app ids as audience; a classic `{id,
 * access_token}` is checked with the Graph API (`me?fields=id` must be `id`, `app` must be one of
 * `appIds`), each call signed with `appsecret_proof` when `appSecret` is set.
 * @returns the data to keep, as given.
 * @throws ParseError 101 as Parse Server's texts ("Facebook auth is invalid for this user.").
 */
export async function verifyFacebook(
  data: Record<string, unknown>,
  options: z.output<typeof facebookOptions>,
  fetch: OutboundFetch,
  idTokens: IdTokens,
): Promise<Record<string, unknown>> {
  if (data.token !== undefined) {
    await idTokens.verify(data.token, { label: 'Facebook', jwksUri: options.jwksUri ?? FACEBOOK_KEYS, issuers: [FACEBOOK_ISSUER], audience: options.appIds, id: data.id });
    return data;
  }
  const invalid = () => refused('Facebook auth is invalid for this user.');
  if (typeof data.access_token !== 'string' || !data.access_token) throw invalid();
  const graph = (path: string) => {
    const url = new URL(path, options.graphUrl ?? FACEBOOK_GRAPH);
    url.searchParams.set('access_token', data.access_token as string);
    if (options.appSecret) url.searchParams.set('appsecret_proof', crypto.createHmac('sha256', options.appSecret).update(data.access_token as string).digest('hex'));
    return askProvider(fetch, 'Facebook', url.toString());
  };
  const me = await graph('me?fields=id');
  if (!me.ok || !isPlainObject(me.body) || String(me.body.id) !== String(data.id)) throw invalid();
  const app = await graph('app');
  if (!app.ok || !isPlainObject(app.body) || !options.appIds.includes(String(app.body.id))) throw invalid();
  return data;
}

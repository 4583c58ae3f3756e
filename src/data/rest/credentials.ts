import { sameBytes } from '../../shared/sameBytes.js';
import type { AppKeys } from '../appKeys.js';
import { MASTER, type Auth } from '../auth/context.js';
import { ParseError } from '../errors.js';
import type { AppServices } from '../appServices.js';

/** Credentials of a data API request, from headers or from the JS SDK's JSON body. */
export interface Credentials {
  applicationId?: string;
  masterKey?: string;
  clientKeys: string[];
  sessionToken?: string;
  installationId?: string;
}

/** A credential's two header names, `X-Backend-*` first (docs/design.md, decision 6), lower-cased as Node gives them. */
const headerNames = (name: string): readonly [string, string] => [`x-backend-${name}`, `x-parse-${name}`];

const header = (headers: Record<string, string | string[] | undefined>, names: readonly [string, string]): string | undefined => {
  const first = headers[names[0]];
  if (typeof first === 'string' && first !== '') return first;
  const second = headers[names[1]];
  return typeof second === 'string' && second !== '' ? second : undefined;
};

// Built once: a name put together per request is a new string that each lookup must hash first.
const APPLICATION_ID = headerNames('application-id');
const MASTER_KEY = headerNames('master-key');
const SESSION_TOKEN = headerNames('session-token');
const INSTALLATION_ID = headerNames('installation-id');

/** Headers (after the `X-Backend-`/`X-Parse-` prefix) and SDK body fields that carry a client key. */
const CLIENT_KEY_HEADERS = ['rest-api-key', 'javascript-key', 'client-key', 'windows-key'].map(headerNames);
const CLIENT_KEY_FIELDS = ['_RESTAPIKey', '_JavaScriptKey', '_ClientKey', '_windowsKey'];

/** Body fields the JS SDK sends beside an object's own fields; never data. */
export const SDK_BODY_FIELDS = [
  '_ApplicationId',
  '_JavaScriptKey',
  '_ClientKey',
  '_RESTAPIKey',
  '_windowsKey',
  '_MasterKey',
  '_SessionToken',
  '_InstallationId',
  '_ClientVersion',
  '_method',
  '_RevocableSession',
  '_context',
  '_ContentType',
] as const;

/**
 * Reads credentials as docs/design.md, decision 6 says: `X-Backend-*` or `X-Parse-*` headers
 * (Application-Id, REST-API-Key, JavaScript-Key, Client-Key, Windows-Key, Master-Key,
 * Session-Token, Installation-Id), else the SDK's body fields (`_ApplicationId`, ...).
 */
export function readCredentials(headers: Record<string, string | string[] | undefined>, body: Record<string, unknown> | undefined): Credentials {
  const field = (name: string) => (typeof body?.[name] === 'string' && body[name] !== '' ? (body[name] as string) : undefined);
  // Runs on every data API call: no intermediate arrays.
  const clientKeys: string[] = [];
  for (const names of CLIENT_KEY_HEADERS) {
    const value = header(headers, names);
    if (value !== undefined) clientKeys.push(value);
  }
  if (body) {
    for (const name of CLIENT_KEY_FIELDS) {
      const value = field(name);
      if (value !== undefined) clientKeys.push(value);
    }
  }
  return {
    applicationId: header(headers, APPLICATION_ID) ?? field('_ApplicationId'),
    masterKey: header(headers, MASTER_KEY) ?? field('_MasterKey'),
    clientKeys,
    sessionToken: header(headers, SESSION_TOKEN) ?? field('_SessionToken'),
    installationId: header(headers, INSTALLATION_ID) ?? field('_InstallationId'),
  };
}

/** The app's keys as bytes, made once per app: keys never change once the app exists (apps.ts). */
const keyBytes = new WeakMap<AppKeys, { master: Buffer; client: Buffer[] }>();

function bytesOf(keys: AppKeys): { master: Buffer; client: Buffer[] } {
  let bytes = keyBytes.get(keys);
  if (!bytes) {
    bytes = { master: Buffer.from(keys.masterKey), client: [keys.restKey, keys.javascriptKey, keys.clientKey, keys.dotnetKey].map((k) => Buffer.from(k)) };
    keyBytes.set(keys, bytes);
  }
  return bytes;
}


/** Parse refuses keys that match nothing with `403 {"error":"unauthorized"}`. */
export const unauthorized = () => Object.assign(new ParseError(0, 'unauthorized', 403), { bare: true });

/**
 * The auth a request acts as: master when the master key matches; otherwise one of the app's client
 * keys (REST, JavaScript, client, .NET) must match, and a session token makes it a user's.
 * Answers at once unless a session token must be looked up (then a promise). With `lookUpSession`
 * false the token is carried unchecked and the auth has no user: `GET /sessions/me` checks it
 * itself, as Parse Server's `handleParseSession` leaves that route's token alone (parse-server
 * src/middlewares.js).
 * @throws the 403 unauthorized error when no key matches; ParseError 209 (a rejection) for a bad session token.
 */
export function authenticate(keys: AppKeys, credentials: Credentials, services: AppServices, lookUpSession = true): Auth | Promise<Auth> {
  const bytes = bytesOf(keys);
  if (credentials.masterKey !== undefined) {
    if (!sameBytes(Buffer.from(credentials.masterKey), bytes.master)) throw unauthorized();
    return { ...MASTER, installationId: credentials.installationId, sessionToken: credentials.sessionToken };
  }
  if (!credentials.clientKeys.some((k) => {
    const given = Buffer.from(k);
    return bytes.client.some((key) => sameBytes(given, key));
  }))
    throw unauthorized();
  if (!lookUpSession) return { master: false, principals: ['*'], installationId: credentials.installationId, sessionToken: credentials.sessionToken };
  return services.sessions.clientAuth(credentials.sessionToken, credentials.installationId);
}

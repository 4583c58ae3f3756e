import { timingSafeEqual } from 'node:crypto';
import type { AppKeys } from '../apps.js';
import { MASTER, type Auth } from '../auth/context.js';
import { clientAuth } from '../auth/sessions.js';
import { ParseError } from '../errors.js';
import type { StorageAdapter } from '../storage/adapter.js';

/** Credentials of a data API request, from headers or from the JS SDK's JSON body. */
export interface Credentials {
  applicationId?: string;
  masterKey?: string;
  clientKeys: string[];
  sessionToken?: string;
  installationId?: string;
}

const HEADER_PREFIXES = ['x-backend-', 'x-parse-'];

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  for (const prefix of HEADER_PREFIXES) {
    const value = headers[prefix + name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
};

/** Headers (after the `X-Backend-`/`X-Parse-` prefix) and SDK body fields that carry a client key. */
const CLIENT_KEY_HEADERS = ['rest-api-key', 'javascript-key', 'client-key', 'windows-key'];
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
 * Reads credentials as design.md decision 6 says: `X-Backend-*` or `X-Parse-*` headers
 * (Application-Id, REST-API-Key, JavaScript-Key, Client-Key, Windows-Key, Master-Key,
 * Session-Token, Installation-Id), else the SDK's body fields (`_ApplicationId`, ...).
 */
export function readCredentials(headers: Record<string, string | string[] | undefined>, body: Record<string, unknown> | undefined): Credentials {
  const field = (name: string) => (typeof body?.[name] === 'string' && body[name] !== '' ? (body[name] as string) : undefined);
  // Runs on every data API call: no intermediate arrays.
  const clientKeys: string[] = [];
  for (const name of CLIENT_KEY_HEADERS) {
    const value = header(headers, name);
    if (value !== undefined) clientKeys.push(value);
  }
  if (body) {
    for (const name of CLIENT_KEY_FIELDS) {
      const value = field(name);
      if (value !== undefined) clientKeys.push(value);
    }
  }
  return {
    applicationId: header(headers, 'application-id') ?? field('_ApplicationId'),
    masterKey: header(headers, 'master-key') ?? field('_MasterKey'),
    clientKeys,
    sessionToken: header(headers, 'session-token') ?? field('_SessionToken'),
    installationId: header(headers, 'installation-id') ?? field('_InstallationId'),
  };
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Parse refuses keys that match nothing with `403 {"error":"unauthorized"}`. */
export const unauthorized = () => Object.assign(new ParseError(0, 'unauthorized', 403), { bare: true });

/**
 * The auth a request acts as: master when the master key matches; otherwise one of the app's client
 * keys (REST, JavaScript, client, .NET) must match, and a session token makes it a user's.
 * @throws the 403 unauthorized error when no key matches; ParseError 209 for a bad session token.
 */
export function authenticate(keys: AppKeys, credentials: Credentials, storage: StorageAdapter): Auth {
  if (credentials.masterKey !== undefined) {
    if (!same(credentials.masterKey, keys.masterKey)) throw unauthorized();
    return { ...MASTER, installationId: credentials.installationId, sessionToken: credentials.sessionToken };
  }
  const accepted = [keys.restKey, keys.javascriptKey, keys.clientKey, keys.dotnetKey];
  if (!credentials.clientKeys.some((k) => accepted.some((a) => same(k, a)))) throw unauthorized();
  return clientAuth(storage, credentials.sessionToken, credentials.installationId);
}

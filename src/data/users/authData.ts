import type { DataStore } from '../store.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import type { ServerSettings } from '../settings.js';
import { isPlainObject } from '../values.js';
import { unsupported } from './providers/catalog.js';
import { isBuiltIn } from './providers/options.js';
import type { AuthDataChanges } from './authDataChanges.js';

/**
 * A user's `authData` (Parse REST guide, "Linking Users"): provider name → that provider's data,
 * kept in the `_User` field `authData`. `anonymous` (the JS SDK's `Parse.AnonymousUtils`:
 * `{anonymous: {id: <uuid>}}`) has nothing to verify, the id is the secret; the other providers'
 * data is checked with the provider first (providers/catalog.ts) and then stored as checked.
 */



/** Parse Server's answer when a provider id belongs to another user (RestWrite.handleAuthData). */
export const alreadyLinked = () => new ParseError(ParseCode.ACCOUNT_ALREADY_LINKED, 'this auth is already used');

/**
 * Whether `authData` names a provider with data, so that a signup needs no username and password
 * (Parse Server's `RestWrite.validateAuthData`, `hasAuthData`): `{}`, `{anonymous: {}}` and
 * `{anonymous: null}` do not.
 */
export function hasProviderData(authData: unknown): boolean {
  return isPlainObject(authData) && Object.values(authData).some((data) => isPlainObject(data) && Object.keys(data).length > 0);
}

/**
 * Reads the `authData` of a `_User` write.
 * @param settings the app's options: `anonymous` needs `enableAnonymousUsers`; a provider other than
 *   the built-in ones (providers/options.ts) must be one of its `auth` OpenID Connect providers.
 * @returns provider → data to link, or null to unlink (an empty object when it names nothing).
 * @throws ParseError 252 "This authentication method is unsupported." for an `authData` that is not
 *   an object and for a provider the app does not have; 162 for provider data that is not an object,
 *   and for anonymous data without a non-empty string `id` (Parse Server's text for a non-string id;
 *   it accepts a missing one and makes a user nobody can log in as again).
 */
export function readAuthData(value: unknown, settings: ServerSettings): AuthDataChanges {
  if (!isPlainObject(value)) throw unsupported();
  const changes: AuthDataChanges = {};
  for (const [provider, data] of Object.entries(value)) {
    if (data === null) {
      changes[provider] = null;
      continue;
    }
    const known = provider === 'anonymous' ? settings.enableAnonymousUsers : isBuiltIn(provider) || Object.hasOwn(settings.auth, provider);
    if (!known) throw unsupported();
    if (!isPlainObject(data)) throw new ParseError(ParseCode.INVALID_VALUE, `authData.${provider} must be an object of the provider's data.`);
    if (provider === 'anonymous') {
      const id = data.id;
      if (id !== undefined && typeof id !== 'string') throw new ParseError(ParseCode.INVALID_VALUE, `Invalid authData id for provider '${provider}'.`);
      if (!id) throw new ParseError(ParseCode.INVALID_VALUE, `authData.${provider} must be an object with an id (a non-empty string).`);
    }
    changes[provider] = data;
  }
  return changes;
}

/** The providers a write links (those given data), in the order given: a session's `createdWith.authProvider`. */
export const linkedProviders = (changes: AuthDataChanges | undefined): string[] =>
  changes ? Object.keys(changes).filter((provider) => changes[provider] !== null) : [];

/**
 * The stored `authData` once `changes` apply: each provider set or removed, the others kept (as
 * Parse Server stores providers one by one); undefined when no provider remains.
 */
export function mergeAuthData(current: unknown, changes: AuthDataChanges): Record<string, unknown> | undefined {
  const merged: Record<string, unknown> = isPlainObject(current) ? { ...current } : {};
  for (const [provider, data] of Object.entries(changes)) {
    if (data === null) delete merged[provider];
    else merged[provider] = data;
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** Per store, the providers whose id has its index on `_User`. */
const indexed = new WeakMap<DataStore, Set<string>>();

async function ensureIndex(store: DataStore, provider: string): Promise<void> {
  let providers = indexed.get(store);
  if (!providers) indexed.set(store, (providers = new Set()));
  if (providers.has(provider)) return;
  await store.ensureIndex('_User', `authData_${provider}_id`, { [`authData.${provider}.id`]: 1 });
  providers.add(provider);
}

/**
 * The user some provider of `changes` is linked to (master view), or undefined. The lookup by
 * `authData.<provider>.id` is an indexed equality (the index made on first use once `_User`
 * exists), so that an anonymous login reads one entry whatever the number of users.
 * @throws ParseError 208 when the providers point at two different users.
 */
export async function findLinkedUser(store: DataStore, changes: AuthDataChanges): Promise<StoredRow | undefined> {
  if (!store.schema.has('_User')) return undefined;
  let found: StoredRow | undefined;
  for (const provider of linkedProviders(changes)) {
    await ensureIndex(store, provider);
    const [user] = await store.rows('_User', { where: { [`authData.${provider}.id`]: changes[provider]!.id }, limit: 1 });
    if (user && found && user.objectId !== found.objectId) throw alreadyLinked();
    found ??= user;
  }
  return found;
}

/** @throws ParseError 208 when a provider id of `changes` is linked to a user other than `selfId`. */
export async function checkAuthDataFree(store: DataStore, changes: AuthDataChanges, selfId?: string): Promise<void> {
  const holder = await findLinkedUser(store, changes);
  if (holder && holder.objectId !== selfId) throw alreadyLinked();
}

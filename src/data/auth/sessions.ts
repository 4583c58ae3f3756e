import { ParseCode, ParseError } from '../errors.js';
import type { DataStore } from '../store.js';
import type { StoredRow } from '../storage/adapter.js';
import type { Auth } from './context.js';
import { rolePrincipals } from './roles.js';

/** A Pointer to a `_User`, as sessions and queries hold it. */
export const userPointer = (objectId: string) => ({ __type: 'Pointer', className: '_User', objectId });

/**
 * The user a session token belongs to (Parse's `_Session` class: `sessionToken`, `user`, `expiresAt`).
 * @throws ParseError 209 "Invalid session token" for an unknown token or one whose user is gone, and
 *   "Session token is expired." once its `expiresAt` has passed (parse-server src/Auth.js,
 *   `getAuthForSessionToken`, which compares `expiresAt < now`).
 */
export async function sessionUser(store: DataStore, sessionToken: string): Promise<{ session: StoredRow; user: StoredRow }> {
  const invalid = () => new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Invalid session token');
  const [session] = await store.rows('_Session', { where: { sessionToken }, limit: 1 });
  if (!session) throw invalid();
  const expiresAt = (session.data.expiresAt as { iso?: string } | undefined)?.iso;
  if (expiresAt && Date.parse(expiresAt) < Date.now()) throw new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Session token is expired.');
  const user = await userOfSession(store, session);
  if (!user) throw invalid();
  return { session, user };
}

/** The `_User` row a session's `user` Pointer names, expired or not; undefined when there is none. */
async function userOfSession(store: DataStore, session: StoredRow): Promise<StoredRow | undefined> {
  const userId = (session.data.user as { objectId?: string } | undefined)?.objectId;
  return userId ? store.row('_User', userId) : undefined;
}

/**
 * The auth of a client-key request, with the user of its session token when one came: at once
 * without a token, else once the session, its user and their roles are read.
 */
export function clientAuth(store: DataStore, sessionToken: string | undefined, installationId: string | undefined): Auth | Promise<Auth> {
  if (!sessionToken) return { master: false, principals: ['*'], installationId };
  return sessionUser(store, sessionToken).then(({ user }) => userAuth(store, user, sessionToken, installationId));
}

/** A client's auth as a user: its id and roles as principals. */
async function userAuth(store: DataStore, user: StoredRow, sessionToken: string | undefined, installationId: string | undefined): Promise<Auth> {
  return { master: false, user, sessionToken, installationId, principals: ['*', user.objectId, ...(await rolePrincipals(store, user.objectId))] };
}

/**
 * The auth of a session's own user, whether or not the session has expired: `GET /sessions/me`
 * answers an expired session too, since Parse Server's `handleParseSession` (parse-server
 * src/middlewares.js) does not check the token of that route and `SessionsRouter.handleMe` reads the
 * session as its user. Undefined when the session's user is gone.
 */
export async function sessionOwnerAuth(store: DataStore, session: StoredRow, installationId: string | undefined): Promise<Auth | undefined> {
  const user = await userOfSession(store, session);
  return user && userAuth(store, user, session.data.sessionToken as string | undefined, installationId);
}

/**
 * A client's `_Session` query, limited to its own sessions as Parse Server's RestQuery limits every
 * `_Session` query without the master key, also one that `redirectClassNameForKey` leads to
 * (GHSA-6r2j-cxgf-495f). ACLs do the same for sessions made here; sessions imported from Parse
 * Server may have none.
 * @throws ParseError 209 "Invalid session token" without a user.
 */
export function ownSessionsOnly(where: Record<string, unknown>, auth: Auth): Record<string, unknown> {
  if (!auth.user) throw new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Invalid session token');
  const mine = { user: userPointer(auth.user.objectId) };
  return Object.keys(where).length === 0 ? mine : { $and: [where, mine] };
}

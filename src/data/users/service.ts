import { randomBytes } from 'node:crypto';
import { aclAllows, MASTER, type Auth } from '../auth/context.js';
import { sessionUser, userPointer } from '../auth/sessions.js';
import { checkingFace, type WriteResult } from '../engine.js';
import type { DataStore } from '../store.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import { checkProhibitedKeywords } from '../objects/keywords.js';
import { checkAcl, isPlainObject } from '../values.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { randomAlphanumeric } from '../../shared/ids.js';
import { checkAuthDataFree, findLinkedUser, hasProviderData, linkedProviders, mergeAuthData, readAuthData, alreadyLinked } from './authData.js';
import type { AuthDataChanges } from './authDataChanges.js';
import { sessionExpiry, type ServerSettings } from '../settings.js';
import { endedTokens, userOfResetToken, verificationToken } from './emails.js';

/**
 * Users and sessions of a Backend App, as Parse Server's `UsersRouter` and `RestWrite` treat the
 * `_User` and `_Session` classes: signup, login, logout, `me`, password changes, and the session
 * objects that tie a session token to a user. They hold the app's master view (store.ts) to look
 * users and sessions up as Parse Server's `UsersRouter` does with the master key, and write the
 * caller's objects through the store's checking face (`checkingFace`), so ACLs and class-level
 * permissions apply; password hashes live in the internal `_hashed_password` field, which never
 * leaves the data layer (objects/output.ts drops it from every answer).
 */

type Acl = NonNullable<StoredRow['acl']>;

/** A session token as Parse Server makes them: `r:` and 32 lowercase hex digits (128 random bits). */
export const newSessionToken = (): string => `r:${randomBytes(16).toString('hex')}`;

/** How a session came to be (Parse's `createdWith`). */
export interface CreatedWith {
  action: 'signup' | 'login' | 'create';
  /** `password`, `masterkey`, or the auth providers of the login, comma-separated (`anonymous`). */
  authProvider?: string;
}

const invalidLogin = () => new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Invalid username/password.');
const invalidSession = () => new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Invalid session token');
const selfOnly = (userId: string): Acl => ({ [userId]: { read: true, write: true } });

/** A `$regex` that matches `text` exactly, ignoring case (Parse's case-insensitive uniqueness). */
const sameIgnoringCase = (text: string) => ({ $regex: `^${text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}$`, $options: 'i' });

const exists = async (store: DataStore, className: string, where: Record<string, unknown>): Promise<boolean> =>
  (await store.rows(className, { where, limit: 1 })).length > 0;

/** Deletes every session of a user (master view). */
async function deleteSessionsOf(store: DataStore, userId: string, where: Record<string, unknown> = {}): Promise<void> {
  const sessions = await store.rows('_Session', { where: { user: userPointer(userId), ...where }, limit: Number.MAX_SAFE_INTEGER });
  await store.deleteRows('_Session', sessions.map((session) => session.objectId));
}

/**
 * Creates a `_Session` for a user (Parse Server's `RestWrite.createSession`): `sessionToken`, `user`
 * Pointer, `createdWith`, `expiresAt` as the app's `sessionLength` and `expireInactiveSessions` say
 * (settings.ts), `installationId` when known, and an ACL that
 * only the user matches. Other sessions of the same user and installation are deleted, as Parse
 * Server's `destroyDuplicatedSessions` does.
 * @param extra further session fields (a `POST /sessions` body; the master key's may set `expiresAt`).
 * @throws ParseError 105/111 for bad `extra` fields.
 */
export function createSession(store: DataStore, userId: string, createdWith: CreatedWith, installationId?: string, extra: Record<string, unknown> = {}): Promise<StoredRow> {
  const body: Record<string, unknown> = {
    ...sessionExpiry(store.settings()),
    ...extra,
    sessionToken: newSessionToken(),
    user: userPointer(userId),
    createdWith,
    ACL: selfOnly(userId),
  };
  if (installationId) body.installationId = installationId;
  return store.atomically(async (store) => {
    if (installationId) await deleteSessionsOf(store, userId, { installationId });
    return (await checkingFace(store).create('_Session', body, MASTER)).row;
  });
}

/**
 * Whether users must verify their email before they log in: the app's `verifyUserEmails` and
 * `preventLoginWithUnverifiedEmail` both on, as Parse Server asks for both (parse-server
 * src/RestWrite.js, `createSessionTokenIfNeeded`; src/Routers/UsersRouter.js).
 */
const mustVerifyToLogIn = (store: DataStore): boolean => store.settings().verifyUserEmails && store.settings().preventLoginWithUnverifiedEmail;

/** The fields of a `_User` write, split into data, password and ACL. */
interface UserInput {
  fields: Record<string, unknown>;
  password?: string;
  /** undefined: not given; null: `"ACL": null`. */
  acl?: Acl | null;
  /** The body's `authData` (authData.ts), when it has one. */
  authData?: AuthDataChanges;
}

/**
 * Checks a `_User` create or update body as Parse Server's `RestWrite` does (`validateAuthData`,
 * `checkRestrictedFields`, `_validateEmail`).
 * A signup whose `authData` names a provider with data needs neither username nor password.
 * @throws ParseError 107 (not an object), 105 (a prohibited keyword: objects/keywords.ts), 200
 *   (username missing or empty), 201 (password missing or empty), 119 (`emailVerified` set by a
 *   client), 252/162 (`authData`, as `readAuthData`), 125 (malformed email), 111 (malformed ACL).
 */
function readUserBody(body: unknown, auth: Auth, creating: boolean, settings: ServerSettings): UserInput {
  if (!isPlainObject(body)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object of fields.');
  // Here too, for the signup's ACL, which does not go through DataEngine.create's check.
  checkProhibitedKeywords(body);
  const { password, sessionToken: _ignored, ACL, ...fields } = body;
  const byProvider = creating && hasProviderData(fields.authData);
  // Parse Server gives a user signing up through a provider a random username when it has none.
  if (byProvider && fields.username === '') delete fields.username;
  if (((creating && !byProvider) || 'username' in fields) && (typeof fields.username !== 'string' || fields.username === '')) {
    throw new ParseError(ParseCode.USERNAME_MISSING, 'bad or missing username');
  }
  if (((creating && !byProvider) || 'password' in body) && (typeof password !== 'string' || password === '')) {
    throw new ParseError(ParseCode.PASSWORD_MISSING, 'password is required');
  }
  if (!auth.master && 'emailVerified' in fields) {
    throw new ParseError(ParseCode.OPERATION_FORBIDDEN, "Clients aren't allowed to manually update email verification.");
  }
  let authData: AuthDataChanges | undefined;
  if ('authData' in fields) {
    authData = readAuthData(fields.authData, settings);
    delete fields.authData;
  }
  const email = fields.email;
  const deleting = email === null || (isPlainObject(email) && email.__op === 'Delete');
  if (email !== undefined && !deleting && (typeof email !== 'string' || !/^.+@.+$/.test(email))) {
    throw new ParseError(ParseCode.INVALID_EMAIL_ADDRESS, 'Email address format is invalid.');
  }
  const input: UserInput = { fields, password: password as string | undefined };
  if ('ACL' in body) input.acl = ACL === null ? null : checkAcl(ACL);
  if (authData && Object.keys(authData).length > 0) input.authData = authData;
  return input;
}

/**
 * Usernames and emails are unique, compared ignoring case (Parse Server's `_validateUserName` and
 * `_validateEmail`). Call inside the write's transaction.
 * @throws ParseError 202 "Account already exists for this username.", 203 for the email.
 */
async function checkUnique(store: DataStore, fields: Record<string, unknown>, selfId?: string): Promise<void> {
  const others = selfId ? { objectId: { $ne: selfId } } : {};
  if (typeof fields.username === 'string' && (await exists(store, '_User', { username: sameIgnoringCase(fields.username), ...others }))) {
    throw new ParseError(ParseCode.USERNAME_TAKEN, 'Account already exists for this username.');
  }
  if (typeof fields.email === 'string' && (await exists(store, '_User', { email: sameIgnoringCase(fields.email), ...others }))) {
    throw new ParseError(ParseCode.EMAIL_TAKEN, 'Account already exists for this email address.');
  }
}

/**
 * Signs a user up (Parse REST guide, "Signing Up"; `POST /users`): checks the body, hashes the
 * password, creates the `_User` with its ACL (the body's, or none else unless the app's
 * `enforcePrivateUsers` is off, then public read; the user always reads and
 * writes itself, as Parse Server forces) and a session with `createdWith.action` "signup" ("login"
 * with the providers as `authProvider` for a signup through them, as Parse Server). A signup
 * through an auth provider (`authData`, authData.ts) may leave out the password, and without a
 * username gets a random one of 25 letters and digits, as Parse Server makes it.
 * @returns the stored user, its new session token, and what the answer adds: the generated
 *   `username`, and `authDataResponse` (always `{}` here) when the body had `authData` providers.
 * @throws ParseError as `readUserBody`, 119 (class-level permissions), 202/203 (taken), 208 (a
 *   provider id another user holds), 105/111 (bad fields).
 */
export async function signUp(store: DataStore, body: unknown, auth: Auth): Promise<SignUpResult> {
  const input = readUserBody(body, auth, true, store.settings());
  if (store.schema.has('_User')) checkingFace(store).checkClp('_User', 'create', auth);
  const generated = input.fields.username === undefined;
  if (generated) input.fields.username = randomAlphanumeric(25);
  await checkUnique(store, input.fields); // fail before spending a hash; checked again below
  const hashed = input.password === undefined ? undefined : await hashPassword(input.password);
  const providers = linkedProviders(input.authData);
  // Parse Server's `verifyUserEmails`: the new user's email waits for its link.
  const verifying = store.settings().verifyUserEmails && typeof input.fields.email === 'string';
  if (verifying) input.fields.emailVerified = false;
  return store.atomically(async (store) => {
    await checkUnique(store, input.fields);
    if (input.authData) {
      await checkAuthDataFree(store, input.authData);
      const authData = mergeAuthData(undefined, input.authData);
      if (authData) input.fields.authData = authData;
    }
    const { row } = await checkingFace(store).create('_User', input.fields, auth, hashed ? { _hashed_password: hashed } : {});
    // Parse Server's `enforcePrivateUsers`: off, a user without an ACL of its own is publicly readable.
    const publicRead: Acl = store.settings().enforcePrivateUsers ? {} : { '*': { read: true } };
    row.acl = { ...(input.acl ?? publicRead), ...selfOnly(row.objectId) };
    if (verifying) Object.assign(row.data, verificationToken(store, row.objectId));
    await store.replaceRow('_User', row);
    const result: SignUpResult = { user: row, verificationMail: verifying };
    if (generated) result.username = row.data.username as string;
    if (input.authData) result.authDataResponse = {};
    // As Parse Server's `RestWrite.createSessionTokenIfNeeded`: while both options are on, no signup
    // gets a session, with an email or without (one without can never verify it), through a password
    // or a provider; the user logs in once verified.
    if (mustVerifyToLogIn(store)) return result;
    // Parse Server's `RestWrite.createSessionToken` counts a signup through providers as their login.
    const createdWith: CreatedWith = providers.length ? { action: 'login', authProvider: providers.join(',') } : { action: 'signup', authProvider: 'password' };
    const session = await createSession(store, row.objectId, createdWith, auth.installationId);
    result.sessionToken = session.data.sessionToken as string;
    return result;
  });
}

/** What `signUp` gives back; `username` and `authDataResponse` are added to the answer when present. */
export interface SignUpResult {
  user: StoredRow;
  /** None when the app's `preventLoginWithUnverifiedEmail` and `verifyUserEmails` keep the user out until verified. */
  sessionToken?: string;
  /** The user's email waits for verification: the caller sends the mail (emails.ts) once this is committed. */
  verificationMail: boolean;
  username?: string;
  authDataResponse?: Record<string, never>;
}

/**
 * Logs in through an auth provider (Parse Server's `RestWrite.handleAuthData` on `POST /users`):
 * when the body's `authData` names a provider id that a user is linked to, that user gets a new
 * session (`createdWith` `{action: "login", authProvider: "anonymous"}`) and the body's other
 * fields are ignored; otherwise the call is a signup (undefined is returned).
 * @returns the user as `store.toJson` answers it, plus `sessionToken` and `authDataResponse`.
 * @throws ParseError 252/162 as `readAuthData`; 208 "this auth is already used" when the linked
 *   user is not the caller's own (a session of another user) or is locked out (ACL `{}`).
 */
export async function logInWithAuthData(
  store: DataStore,
  body: unknown,
  auth: Auth,
  /** Runs before the session is made (cloud code's `beforeLogin`). */
  beforeSession?: (user: StoredRow) => Promise<void>,
): Promise<Record<string, unknown> | undefined> {
  if (!isPlainObject(body) || !hasProviderData(body.authData)) return undefined;
  const changes = readAuthData(body.authData, store.settings());
  const user = await findLinkedUser(store, changes);
  if (!user) return undefined;
  if (auth.user && auth.user.objectId !== user.objectId) throw alreadyLinked();
  if (!auth.master && user.acl && Object.keys(user.acl).length === 0) throw alreadyLinked();
  await beforeSession?.(user);
  const answer = await withSession(store, user, { action: 'login', authProvider: linkedProviders(changes).join(',') }, auth.installationId);
  return { ...answer, authDataResponse: {} };
}

/**
 * Where a login's credentials are: the body, unless the query string carries them (Parse Server's
 * `_authenticateUserFromRequest`; the JS SDK sends them in the body of a `GET` sent as `POST`).
 */
export function loginPayload(body: unknown, query: Record<string, unknown>): Record<string, unknown> {
  const fromBody = isPlainObject(body) ? body : {};
  if ((!fromBody.username && query.username) || (!fromBody.email && query.email)) return query;
  return fromBody;
}

/**
 * Finds the user of a username (or email) and password pair (Parse Server's
 * `_authenticateUserFromRequest`): `username` matches a username or an email; with `email`, the
 * email. A user whose ACL is `{}` is locked out unless the master key asks.
 * @throws ParseError 205 "User email is not verified." when the app's `verifyUserEmails` and
 *   `preventLoginWithUnverifiedEmail` are on and the user's `emailVerified` is not true (also a user
 *   without an email: parse-server src/Routers/UsersRouter.js, `_authenticateUserFromRequest`); 200 (neither username nor email), 201 (no password), 101 "Invalid
 *   username/password." for every mismatch.
 */
export async function authenticate(store: DataStore, payload: Record<string, unknown>, auth: Auth): Promise<StoredRow> {
  const { username, email, password } = payload;
  if (!username && !email) throw new ParseError(ParseCode.USERNAME_MISSING, 'username/email is required.');
  if (!password) throw new ParseError(ParseCode.PASSWORD_MISSING, 'password is required.');
  if (typeof password !== 'string' || (email && typeof email !== 'string') || (username && typeof username !== 'string')) throw invalidLogin();
  const where = email && username ? { email, username } : email ? { email } : { $or: [{ username }, { email: username }] };
  const found = await store.rows('_User', { where, limit: 2 });
  const user = found.length > 1 ? found.find((u) => u.data.username === username) : found[0];
  const matches = await verifyPassword(password, user?.data._hashed_password);
  if (!matches || !user) throw invalidLogin();
  if (!auth.master && user.acl && Object.keys(user.acl).length === 0) throw invalidLogin();
  // Any user not verified, also one without an email; the master key may pass `ignoreEmailVerification`, as in Parse Server.
  if (mustVerifyToLogIn(store) && user.data.emailVerified !== true && !(auth.master && payload.ignoreEmailVerification === true)) {
    throw new ParseError(ParseCode.EMAIL_NOT_FOUND, 'User email is not verified.');
  }
  return user;
}

/** A user as a login answers it: the object and a `sessionToken`. */
function withSession(store: DataStore, user: StoredRow, createdWith: CreatedWith, installationId: string | undefined): Promise<Record<string, unknown>> {
  return store.atomically(async (store) => {
    const current = await store.row('_User', user.objectId);
    if (!current) throw invalidLogin();
    const session = await createSession(store, current.objectId, createdWith, installationId);
    return { ...store.toJson('_User', current), sessionToken: session.data.sessionToken };
  });
}

/**
 * Logs in (Parse REST guide, "Logging In"; `GET`/`POST /login`): a new session with
 * `createdWith.action` "login".
 * @returns the user as `store.toJson` answers it, plus `sessionToken`.
 * @throws ParseError as `authenticate`.
 */
export async function logIn(
  store: DataStore,
  payload: Record<string, unknown>,
  auth: Auth,
  /** Runs between checking the password and creating the session (cloud code's `beforeLogin`). */
  beforeSession?: (user: StoredRow) => Promise<void>,
): Promise<Record<string, unknown>> {
  const user = await authenticate(store, payload, auth);
  await beforeSession?.(user);
  return withSession(store, user, { action: 'login', authProvider: 'password' }, auth.installationId);
}

/**
 * Logs in as any user with the master key (Parse Server's `POST /loginAs`, body `userId`).
 * @throws ParseError 119 without the master key, 162 without `userId`, 101 "user not found".
 */
export async function logInAs(store: DataStore, userId: unknown, auth: Auth): Promise<Record<string, unknown>> {
  if (!auth.master) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, 'master key is required');
  if (typeof userId !== 'string' || userId === '') throw new ParseError(ParseCode.INVALID_VALUE, 'userId must not be empty, null, or undefined');
  const user = await store.row('_User', userId);
  if (!user) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'user not found');
  return withSession(store, user, { action: 'login', authProvider: 'masterkey' }, auth.installationId);
}

/**
 * The user of the request's session (Parse REST guide, "Validating Session Tokens / Retrieving
 * Current User"; `GET /users/me`), with its `sessionToken`.
 * @throws ParseError 209 "Invalid session token" without a valid session token.
 */
export async function me(store: DataStore, auth: Auth): Promise<Record<string, unknown>> {
  if (!auth.sessionToken) throw invalidSession();
  const { user } = await sessionUser(store, auth.sessionToken);
  return { ...store.toJson('_User', user), sessionToken: auth.sessionToken };
}

/** The `_Session` of a session token (master view), or undefined. */
export async function sessionByToken(store: DataStore, sessionToken: string): Promise<StoredRow | undefined> {
  return (await store.rows('_Session', { where: { sessionToken }, limit: 1 }))[0];
}

/**
 * Logs out (Parse REST guide, "Logging Out"; `POST /logout`): deletes the request's session. As Parse
 * Server, a request without a session token succeeds with nothing to do; an invalid one never gets
 * here (the credentials answer 209).
 */
export async function logOut(store: DataStore, auth: Auth): Promise<void> {
  if (!auth.sessionToken) return;
  const session = await sessionByToken(store, auth.sessionToken);
  if (session) await store.deleteRows('_Session', [session.objectId]);
}

/**
 * Checks that the caller may write the user, before uniqueness is looked at (so that a refused
 * caller learns nothing about other accounts). As Parse Server (`rest.js`,
 * `handleSessionMissingError`), a client is refused with 206 both without a session and when the
 * user is another's or does not exist, so that the answer tells no ids apart; the master key gets 101
 * for a user that does not exist.
 * @throws ParseError 206 "Cannot modify user <id>." (update) or "Insufficient auth to delete user"
 *   (delete), 119 (class-level permissions), 101 (master key, no such user).
 */
async function checkUserWritable(store: DataStore, objectId: string, auth: Auth, action: 'update' | 'delete'): Promise<void> {
  const refused = () =>
    auth.master
      ? new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.')
      : new ParseError(ParseCode.SESSION_MISSING, action === 'update' ? `Cannot modify user ${objectId}.` : 'Insufficient auth to delete user');
  if (!auth.master && !auth.user) throw refused();
  if (!store.schema.has('_User')) throw refused();
  checkingFace(store).checkClp('_User', action, auth);
  const row = await store.row('_User', objectId);
  if (!row || !aclAllows(row.acl, auth, 'write')) throw refused();
}

/**
 * What a user update answers: `updatedAt`, computed values, a new `sessionToken` after a client
 * changed its password, and `authDataResponse` (`{}`) when the body had `authData` providers.
 */
export type UserUpdate = WriteResult & { sessionToken?: string; authDataResponse?: Record<string, never>; verificationMail?: boolean };

/**
 * Updates a user (Parse REST guide, "Updating Users"; `PUT /users/<objectId>`). Username and email
 * stay unique; a new password is hashed, every session of the user is revoked (when the app's
 * `revokeSessionOnPasswordReset` is on, its default) and a client gets a new session token in the
 * answer. A new password or email ends a pending password reset link, and a changed email its
 * verification link (emails.ts, `endedTokens`), whoever writes it: the user, the master key, cloud code. A client's
 * ACL always keeps the user's own read and write. `authData` links providers (`{anonymous: {id}}`)
 * or unlinks them (`{anonymous: null}`, as the JS SDK's `setUsername` on an anonymous user sends).
 * @throws ParseError as `readUserBody` (the body is checked first, as Parse Server does); 206, 101,
 *   119 as `checkUserWritable`; 202/203 (taken); 208 (a provider id another user holds).
 */
export async function updateUser(store: DataStore, objectId: string, body: unknown, auth: Auth): Promise<UserUpdate> {
  const input = readUserBody(body, auth, false, store.settings());
  await checkUserWritable(store, objectId, auth, 'update');
  await checkUnique(store, input.fields, objectId);
  const hashed = input.password === undefined ? undefined : await hashPassword(input.password);
  return store.atomically(async (store) => {
      await checkUnique(store, input.fields, objectId);
      const changes: Record<string, unknown> = { ...input.fields };
      const emailGiven = 'email' in input.fields;
      const current = emailGiven || input.authData ? await store.row('_User', objectId) : undefined;
      const newEmail = typeof input.fields.email === 'string' ? input.fields.email : undefined;
      const emailChanged = emailGiven && current !== undefined && current.data.email !== newEmail;
      // A changed email waits for its link again (Parse Server's verifyUserEmails on update).
      const verifying = emailChanged && newEmail !== undefined && store.settings().verifyUserEmails;
      if (verifying) changes.emailVerified = false;
      if (input.acl !== undefined) changes.ACL = auth.master ? input.acl : { ...(input.acl ?? {}), ...selfOnly(objectId) };
      if (input.authData) {
        await checkAuthDataFree(store, input.authData, objectId);
        changes.authData = mergeAuthData(current?.data.authData, input.authData) ?? { __op: 'Delete' };
      }
      const extra = {
        ...(hashed ? { _hashed_password: hashed } : {}),
        ...endedTokens(hashed !== undefined || emailGiven, emailChanged),
        ...(verifying ? verificationToken(store, objectId) : {}),
      };
      const result: UserUpdate = await checkingFace(store).update('_User', objectId, changes, auth, extra);
      if (verifying) result.verificationMail = true;
      if (input.authData) result.authDataResponse = {};
      if (hashed) {
        if (store.settings().revokeSessionOnPasswordReset) await deleteSessionsOf(store, objectId);
        if (!auth.master) {
          const session = await createSession(store, objectId, { action: 'login', authProvider: 'password' }, auth.installationId);
          result.sessionToken = session.data.sessionToken as string;
        }
      }
      return result;
    });
}

/**
 * Deletes a user (Parse REST guide, "Deleting Users") and its sessions.
 * @throws ParseError 206 "Insufficient auth to delete user" without a user or the master key; 101.
 */
export async function deleteUser(store: DataStore, objectId: string, auth: Auth): Promise<void> {
  await checkUserWritable(store, objectId, auth, 'delete');
  await store.atomically(async (store) => {
    await checkingFace(store).delete('_User', objectId, auth);
    await deleteSessionsOf(store, objectId);
  });
}

/**
 * Sets a new password through a password reset link (the page of rest/routes/pages.ts; Parse
 * Server's `UserController.updatePassword`): the link is spent, and every session of the user ends
 * when the app's `revokeSessionOnPasswordReset` is on (its default).
 * @returns false for a link that is unknown or spent.
 * @throws ParseError 201 "password is required" for an empty password.
 */
export async function resetPassword(store: DataStore, token: unknown, password: unknown): Promise<boolean> {
  if (typeof password !== 'string' || password === '') throw new ParseError(ParseCode.PASSWORD_MISSING, 'password is required');
  if (!(await userOfResetToken(store, token))) return false;
  const hashed = await hashPassword(password);
  return store.atomically(async (store) => {
    const user = await userOfResetToken(store, token);
    if (!user) return false;
    const { _perishable_token: _spent, _perishable_token_expires_at: _expiry, ...data } = user.data;
    await store.replaceRow('_User', { ...user, updatedAt: new Date().toISOString(), data: { ...data, _hashed_password: hashed } }, true);
    if (store.settings().revokeSessionOnPasswordReset) await deleteSessionsOf(store, user.objectId);
    return true;
  });
}

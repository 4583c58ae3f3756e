import { checkGetParams } from '../../objects/findParams.js';
import { loginPayload, type UserUpdate } from '../../users/service.js';
import { isPlainObject } from '../../values.js';
import { hasProviderData, readAuthData } from '../../users/authData.js';
import type { MailContext } from '../../users/emails.js';
import type { StoredRow } from '../../storage/adapter.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok, type DataRequest, type DataResponse, type RouteHandler } from '../types.js';
import { roleRoutes } from './roles.js';
import { afterTrigger, beforeSave, guardTrigger } from '../../cloud/hooks.js';
import { triggerContext } from './classes.js';
import { sessionRoutes } from './sessions.js';

/** `/users` and `/classes/_User` name the same objects (Parse REST guide, "Users"). */
const USER_PATHS = ['/users', '/classes/_User'] as const;

const userLocation = (req: DataRequest, objectId: string) => `${req.mountUrl}/users/${encodeURIComponent(objectId)}`;

/** A field of the body, else of the query string (the JS SDK sends a GET's fields in a POST body). */
const param = (req: DataRequest, name: string): unknown => (isPlainObject(req.body) && req.body[name] !== undefined ? req.body[name] : req.query[name]);

/**
 * Signup runs `_User`'s beforeSave and afterSave, as Parse Server's RestWrite does for any create:
 * beforeSave sees the fields as sent (the plaintext password included, so it can judge it; it is
 * never stored or answered) and may change them or refuse; afterSave sees the saved user.
 * A body whose `authData` names a provider id some user is linked to logs that user in instead
 * (200, the user and a session token; `beforeLogin` runs, not the save triggers), as Parse Server's
 * `RestWrite.handleAuthData` does for `Parse.AnonymousUtils.logIn`.
 */
const signUpRoute: RouteHandler = async (req) => {
  refuseInTransaction(req);
  const ctx = triggerContext(req);
  const verified = await withVerifiedAuthData(req);
  const login = await req.services.users.logInWithAuthData(verified, req.auth, (row) => guardTrigger(ctx, 'beforeLogin', '_User', req.engine.toJson('_User', row)));
  if (login) return ok(login);
  const body = await beforeSave(ctx, '_User', verified);
  const { user, sessionToken, username, authDataResponse, verificationMail } = await req.services.users.signUp(body, req.auth);
  if (verificationMail) mailLater(req, user);
  await afterTrigger(ctx, 'afterSave', '_User', req.engine.toJson('_User', user));
  const answer = { objectId: user.objectId, createdAt: user.createdAt, ...(username ? { username } : {}), sessionToken, ...(authDataResponse ? { authDataResponse } : {}) };
  return ok(answer, 201, { location: userLocation(req, user.objectId) });
};

const findUsers: RouteHandler = async (req) => {
  const answer = await req.engine.find('_User', req.query, req.auth);
  return ok(answer);
};

/** Parse Server adds the caller's session token when users fetch themselves (the SDK's `fetch` keeps it). */
const getUser: RouteHandler = async (req, { objectId }) => {
  checkGetParams(req.query);
  const user = await req.engine.get('_User', objectId!, req.auth, req.query);
  if (req.auth.sessionToken && req.auth.user?.objectId === objectId) user.sessionToken = req.auth.sessionToken;
  return ok(user);
};

const updateAnswer = ({ row, computed, sessionToken, authDataResponse }: UserUpdate): DataResponse =>
  ok({ updatedAt: row.updatedAt, ...computed, ...(sessionToken ? { sessionToken } : {}), ...(authDataResponse ? { authDataResponse } : {}) });

const putUser: RouteHandler = async (req, { objectId }) => {
  if (isPlainObject(req.body) && req.body.password !== undefined) refuseInTransaction(req);
  let body = req.body;
  if (isPlainObject(body) && body.authData !== undefined) {
    const stored = await req.services.users.storedAuthData(objectId!);
    body = await withVerifiedAuthData(req, stored);
  }
  const updated = await req.services.users.updateUser(objectId!, body, req.auth);
  if (updated.verificationMail) mailLater(req, updated.row);
  return updateAnswer(updated);
};

/** Where a request's mails and links come from (users/emails.ts). */
const mailContext = (req: DataRequest): MailContext => ({
  apps: { mailer: req.context.mailer, mailFolder: (applicationId) => req.apps.mailFolder(applicationId) },
  keys: req.keys,
  mountUrl: req.mountUrl,
});

/** Sends a user's verification mail after the answer (as Parse Server, a signup does not wait for SMTP); the outbox records what became of it. */
function mailLater(req: DataRequest, user: StoredRow): void {
  void req.services.mail.sendVerificationMail(mailContext(req), user).catch(() => undefined);
}

/**
 * The body with its `authData` checked by each provider it names (Parse Server's
 * `handleAuthDataValidation`) and replaced by what is to be kept; a body without provider data as
 * it is. A signup or login checks every provider given; an update (`stored`: the user's authData) only
 * those whose data changed. Providers are asked over the network, which a transactional batch does
 * not hold its transaction open for: it answers 108.
 * @throws ParseError 252 (a provider the app does not have), 101 (refused by the provider), 142, 108.
 */
async function withVerifiedAuthData(req: DataRequest, stored?: unknown): Promise<unknown> {
  // Without provider data there is nothing to ask (the body's other checks speak first, as Parse Server's).
  if (!isPlainObject(req.body) || !hasProviderData(req.body.authData)) return req.body;
  const settings = req.engine.settings();
  const changes = readAuthData(req.body.authData, settings);
  if (Object.entries(changes).some(([provider, data]) => data !== null && provider !== 'anonymous')) refuseInTransaction(req);
  return { ...req.body, authData: await req.context.signIn.verify(changes, settings, stored) };
}

const deleteUserRoute: RouteHandler = async (req, { objectId }) => {
  await req.services.users.deleteUser(objectId!, req.auth);
  return ok({});
};

/**
 * The user endpoints of the data API (Parse REST guide, "Users"; Parse Server's `UsersRouter`):
 * signup (`POST /users`, and `POST /classes/_User` as the SDK sends it), login (`GET`/`POST
 * /login`), `POST /loginAs` (master key), `POST /logout`, `GET /users/me`, `GET`/`POST
 * /verifyPassword`, and query, get, update, delete under `/users` and `/classes/_User`. Also
 * registers the session and role endpoints. Signup, login, verifyPassword and a password change
 * wait for bcrypt, which a transactional batch does not hold its transaction open for: it answers 108.
 */
export function userRoutes(router: DataRouter): void {
  for (const base of USER_PATHS) {
    router.on('POST', base, signUpRoute);
    router.on('GET', base, findUsers);
    router.on('GET', `${base}/:objectId`, getUser);
    router.on('PUT', `${base}/:objectId`, putUser);
    router.on('DELETE', `${base}/:objectId`, deleteUserRoute);
  }
  router.on('GET', '/users/me', async (req) => ok(await req.services.users.me(req.auth)));
  router.on(['GET', 'POST'], '/login', async (req) => {
    refuseInTransaction(req);
    const ctx = triggerContext(req);
    const user = await req.services.users.logIn(loginPayload(req.body, req.query), req.auth, (row) =>
      guardTrigger(ctx, 'beforeLogin', '_User', req.engine.toJson('_User', row)),
    );
    const { sessionToken: _token, ...object } = user;
    await afterTrigger({ ...ctx, auth: { ...req.auth } }, 'afterLogin', '_User', object);
    return ok(user);
  });
  router.on('POST', '/requestPasswordReset', async (req) => {
    refuseInTransaction(req);
    await req.services.mail.requestPasswordReset(mailContext(req), req.body);
    return ok({});
  });
  router.on('POST', '/verificationEmailRequest', async (req) => {
    refuseInTransaction(req);
    await req.services.mail.requestVerificationEmail(mailContext(req), req.body);
    return ok({});
  });
  router.on(['GET', 'POST'], '/verifyPassword', async (req) => {
    refuseInTransaction(req);
    const user = await req.services.users.authenticate(loginPayload(req.body, req.query), req.auth);
    return ok(req.engine.toJson('_User', user));
  });
  router.on('POST', '/loginAs', async (req) => ok(await req.services.users.logInAs(param(req, 'userId'), req.auth)));
  router.on('POST', '/logout', async (req) => {
    await req.services.users.logOut(req.auth);
    return ok({});
  });
  sessionRoutes(router);
  roleRoutes(router);
}

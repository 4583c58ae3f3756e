import { checkGetParams } from '../../objects/findParams.js';
import type { Auth } from '../../auth/context.js';
import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import type { DataRouter } from '../router.js';
import { ok, type DataRequest, type RouteHandler } from '../types.js';

/** `/sessions` and `/classes/_Session` name the same objects (Parse REST guide, "Sessions"). */
const SESSION_PATHS = ['/sessions', '/classes/_Session'] as const;

/**
 * Sessions are for their users: without the master key a request needs a user (Parse Server's
 * `RestQuery`, `RestWrite.handleSession`, `rest.del`), and sees only its own sessions; others
 * answer 101.
 * @throws ParseError 209.
 */
function requireUser(auth: Auth, message = 'Invalid session token'): void {
  if (!auth.master && !auth.user) throw new ParseError(ParseCode.INVALID_SESSION_TOKEN, message);
}

const invalidKey = (message: string) => new ParseError(ParseCode.INVALID_KEY_NAME, message);

/** @throws ParseError 101 unless the session exists and, for a client, belongs to it. */
async function checkOwnSession(req: DataRequest, objectId: string): Promise<void> {
  if (req.auth.master) return;
  const user = await req.services.sessions.userOf(objectId);
  if (user === undefined || !isPointerTo(user, req.auth.user?.objectId)) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');
}

/** Whether a body's `user` is a pointer to this user. */
const isPointerTo = (value: unknown, userId: string | undefined) =>
  isPlainObject(value) && value.__type === 'Pointer' && value.className === '_User' && value.objectId === userId;

/**
 * Checks a session update's body (Parse Server's `RestWrite.handleSession`, stricter where Parse
 * Server lets a client choose its token or lifetime).
 * @throws ParseError 107 (not an object), 105 for `ACL` ("Cannot set ACL on a Session."), for
 *   `sessionToken`, `createdWith` and `installationId`, and for a client's `user` other than itself
 *   or `expiresAt`.
 */
function checkSessionUpdate(body: unknown, auth: Auth): Record<string, unknown> {
  const fields = checkSessionFields(body);
  for (const key of ['sessionToken', 'createdWith', 'installationId']) {
    if (key in fields) throw invalidKey(`Cannot set ${key} on a Session.`);
  }
  if (!auth.master) {
    if ('user' in fields && !isPointerTo(fields.user, auth.user?.objectId)) throw invalidKey('Cannot set the user of a Session to another user.');
    if ('expiresAt' in fields) throw invalidKey('Cannot set expiresAt on a Session.');
  }
  return fields;
}

/**
 * What every session write refuses: a body that is not an object (107), an `ACL` (105, as
 * `RestWrite.handleSession`) and an `objectId` (105, as RestWrite refuses one on any create or update).
 */
function checkSessionFields(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object of fields.');
  if ('ACL' in body) throw invalidKey('Cannot set ACL on a Session.');
  if ('objectId' in body) throw invalidKey('objectId is an invalid field name.');
  return body;
}

/**
 * `POST /sessions` (parse-server src/RestWrite.js, `handleSession`). A client's creates a new session
 * for itself: `createdWith` `{action: "create"}`, the app's lifetime, and the body's other fields
 * (`installationId` among them); the body's `user`, `sessionToken`, `expiresAt` and `createdWith`
 * are passed over, as Parse Server does. Its answer is what Parse Server answers: the session's
 * token, user, createdWith, expiresAt, the body's fields and objectId (no dates, no ACL).
 * With the master key the body's `user` Pointer names the user, and the whole session is answered.
 * @throws ParseError 209 "Session token required." without a user; 105 as `checkSessionFields`;
 *   111 when the master key names no user or `installationId` is not a string; 101 when that user
 *   does not exist.
 */
const createSessionRoute: RouteHandler = async (req) => {
  requireUser(req.auth, 'Session token required.');
  const fields = checkSessionFields(req.body);
  if (req.auth.master) {
    for (const key of ['sessionToken', 'createdWith']) if (key in fields) throw invalidKey(`Cannot set ${key} on a Session.`);
    const { user, installationId, ...extra } = fields;
    if (!isPlainObject(user) || user.__type !== 'Pointer' || user.className !== '_User' || typeof user.objectId !== 'string') {
      throw new ParseError(ParseCode.INCORRECT_TYPE, 'user must be a Pointer to a _User when the master key creates a session.');
    }
    if (!(await req.services.users.exists(user.objectId))) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'user not found');
    const session = await req.services.sessions.create(user.objectId, { action: 'create' }, checkInstallationId(installationId), extra);
    return ok(req.engine.toJson('_Session', session), 201, { location: location(req, session.objectId) });
  }
  const { user: _user, sessionToken: _token, expiresAt: _expiresAt, createdWith: _createdWith, installationId, ...extra } = fields;
  const session = await req.services.sessions.create(req.auth.user!.objectId, { action: 'create' }, checkInstallationId(installationId), extra);
  const json = req.engine.toJson('_Session', session);
  const { sessionToken, user, createdWith, expiresAt } = json;
  const answer: Record<string, unknown> = { sessionToken, user, createdWith, expiresAt };
  for (const key of Object.keys(extra)) answer[key] = json[key];
  if (installationId != null) answer.installationId = json.installationId;
  answer.objectId = session.objectId;
  return ok(answer, 201, { location: location(req, session.objectId) });
};

/** @throws ParseError 111 unless a session's `installationId` is a string (or absent). */
function checkInstallationId(installationId: unknown): string | undefined {
  if (installationId != null && typeof installationId !== 'string') throw new ParseError(ParseCode.INCORRECT_TYPE, 'installationId must be a string.');
  return (installationId as string | null | undefined) ?? undefined;
}

const location = (req: DataRequest, objectId: string) => `${req.mountUrl}/sessions/${encodeURIComponent(objectId)}`;

/**
 * The session endpoints (Parse REST guide, "Sessions"; Parse Server's `SessionsRouter`):
 * `GET /sessions/me`, and query, create, get, update, delete under `/sessions` and
 * `/classes/_Session`. They run inside transactional batches.
 */
export function sessionRoutes(router: DataRouter): void {
  router.on('GET', '/sessions/me', async (req) => {
    if (!req.auth.sessionToken) throw new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Session token required.');
    const session = await req.services.sessions.byToken(req.auth.sessionToken);
    if (!session) throw new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Session token not found.');
    // The handler leaves this route's token unchecked (credentials.ts, `authenticate`), so that an
    // expired session is answered too, as Parse Server's `SessionsRouter.handleMe` does; it is read
    // as any get of the session by its user, so that CLP and protectedFields apply (GHSA-g4v2-qx3q-4p64).
    const auth = req.auth.master ? req.auth : await req.services.sessions.ownerAuth(session, req.auth.installationId);
    if (!auth) throw new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Session token not found.');
    return ok(await req.engine.get('_Session', session.objectId, auth));
  });
  for (const base of SESSION_PATHS) {
    router.on('POST', base, createSessionRoute);
    // The engine limits a client's query to its own sessions (auth/sessions.ts, ownSessionsOnly).
    router.on('GET', base, async (req) => ok(await req.engine.find('_Session', req.query, req.auth)));
    router.on('GET', `${base}/:objectId`, async (req, { objectId }) => {
      requireUser(req.auth);
      await checkOwnSession(req, objectId!);
      checkGetParams(req.query);
      return ok(await req.engine.get('_Session', objectId!, req.auth, req.query));
    });
    router.on('PUT', `${base}/:objectId`, async (req, { objectId }) => {
      requireUser(req.auth, 'Session token required.');
      await checkOwnSession(req, objectId!);
      const { row, computed } = await req.engine.update('_Session', objectId!, checkSessionUpdate(req.body, req.auth), req.auth);
      return ok({ updatedAt: row.updatedAt, ...computed });
    });
    router.on('DELETE', `${base}/:objectId`, async (req, { objectId }) => {
      requireUser(req.auth);
      await checkOwnSession(req, objectId!);
      await req.engine.delete('_Session', objectId!, req.auth);
      return ok({});
    });
  }
}

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
 * Checks a session write's body (Parse Server's `RestWrite.handleSession`, stricter where Parse
 * Server lets a client choose its token or lifetime).
 * @throws ParseError 107 (not an object), 105 for `ACL` ("Cannot set ACL on a Session."), for
 *   `sessionToken` and `createdWith`, for `installationId` on update, and for a client's `user`
 *   other than itself or `expiresAt`.
 */
function checkSessionBody(body: unknown, auth: Auth, creating: boolean): Record<string, unknown> {
  if (!isPlainObject(body)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object of fields.');
  if ('ACL' in body) throw invalidKey('Cannot set ACL on a Session.');
  for (const key of ['sessionToken', 'createdWith', ...(creating ? [] : ['installationId'])]) {
    if (key in body) throw invalidKey(`Cannot set ${key} on a Session.`);
  }
  if (!auth.master) {
    if ('user' in body && !isPointerTo(body.user, auth.user?.objectId)) throw invalidKey('Cannot set the user of a Session to another user.');
    if ('expiresAt' in body) throw invalidKey('Cannot set expiresAt on a Session.');
  }
  return body;
}

/**
 * `POST /sessions`: a new session for the caller (`createdWith.action` "create"), or with the master
 * key for the user the body's `user` Pointer names. Answers the whole session, token included.
 * @throws ParseError 209 "Session token required." without a user; 105 as `checkSessionBody`;
 *   111 when the master key names no user; 101 when that user does not exist.
 */
const createSessionRoute: RouteHandler = async (req) => {
  requireUser(req.auth, 'Session token required.');
  const { user, installationId, objectId: _ignored, ...extra } = checkSessionBody(req.body, req.auth, true);
  let userId = req.auth.user?.objectId;
  if (req.auth.master) {
    if (!isPlainObject(user) || user.__type !== 'Pointer' || user.className !== '_User' || typeof user.objectId !== 'string') {
      throw new ParseError(ParseCode.INCORRECT_TYPE, 'user must be a Pointer to a _User when the master key creates a session.');
    }
    if (!(await req.services.users.exists(user.objectId))) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'user not found');
    userId = user.objectId;
  }
  if (installationId != null && typeof installationId !== 'string') throw new ParseError(ParseCode.INCORRECT_TYPE, 'installationId must be a string.');
  const session = await req.services.sessions.create(userId!, { action: 'create' }, (installationId as string | null | undefined) ?? undefined, extra);
  return ok(req.engine.toJson('_Session', session), 201, { location: location(req, session.objectId) });
};

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
    // Read as any get of the session, so that CLP and protectedFields apply (GHSA-g4v2-qx3q-4p64).
    return ok(await req.engine.get('_Session', session.objectId, req.auth));
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
      const { row, computed } = await req.engine.update('_Session', objectId!, checkSessionBody(req.body, req.auth, false), req.auth);
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

import type { Answer, CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: sessions and installations (Parse Server's `SessionsRouter`, and
 * `RestWrite.handleSession` / `handleInstallation` in parse-server src/RestWrite.js).
 */

/** Parse Server names a user signing up through a provider with 25 random letters and digits; compared by shape. */
const RANDOM_USERNAME = /^[A-Za-z0-9]{25}$/;
const maskUsername = (answer: Answer): Answer =>
  typeof answer.body?.username === 'string' && RANDOM_USERNAME.test(answer.body.username) ? { ...answer, body: { ...answer.body, username: '<random username>' } } : answer;

/**
 * A session's answer without its `ACL`: Backyard gives each session its user's own ACL and Parse
 * Server none (docs/parse-differences.md, "A session's ACL").
 */
const withoutAcl = (answer: Answer): Answer => {
  if (!answer.body || typeof answer.body !== 'object' || !('ACL' in answer.body)) return answer;
  const { ACL: _acl, ...body } = answer.body;
  return { ...answer, body };
};

/**
 * A `POST /installations` answer without the `objectId` Backyard adds when the POST updated an
 * installation (docs/parse-differences.md, "A `POST /installations` that names an existing
 * installation"); which row was kept shows in the rows read afterwards.
 */
const updateAnswer = (answer: Answer): Answer => {
  if (answer.status !== 200 || !answer.body || typeof answer.body !== 'object') return answer;
  const { objectId: _id, ...body } = answer.body;
  return { ...answer, body };
};

/** A user signed up with a password. */
async function passwordUser(api: CaseApi, base: string): Promise<{ id: string; token: string; username: string; signup: Answer }> {
  const username = api.cls(base).toLowerCase();
  const signup = await api.call('POST', '/users', { body: { username, password: 'pw' } });
  return { id: signup.body.objectId, token: signup.body.sessionToken, username, signup };
}

/** Sets a session's `expiresAt` to a day ago with the master key. */
async function expire(api: CaseApi, sessionId: string): Promise<Answer> {
  return api.call('PUT', `/sessions/${sessionId}`, { master: true, body: { expiresAt: { __type: 'Date', iso: new Date(Date.now() - 86_400_000).toISOString() } } });
}

/** The id of the session of a token, found with the master key (not through the token, which would put it in Parse Server's user cache). */
async function sessionIdOf(api: CaseApi, token: string): Promise<string> {
  const found = await api.call('GET', '/sessions', { master: true, query: { where: { sessionToken: token } } });
  return found.body.results[0].objectId;
}

export const cases: DiffCase[] = [
  // ---- sessions
  {
    name: 'POST /sessions with a session token: a new session of the caller, createdWith "create", the body\'s other fields kept',
    run: async (api) => {
      const user = await passwordUser(api, 'creator');
      const created = await api.call('POST', '/sessions', { sessionToken: user.token, body: { device: 'phone', installationId: 'inst-1' } });
      const mine = await api.call('GET', '/sessions', { sessionToken: user.token, query: { order: 'createdAt' } });
      return [created, withoutAcl(await api.call('GET', '/sessions/me', { sessionToken: created.body.sessionToken })), mine.body.results.length];
    },
  },
  {
    name: 'POST /sessions: a client\'s user, sessionToken, expiresAt and createdWith are passed over; objectId and ACL answer 105',
    run: async (api) => {
      const user = await passwordUser(api, 'chooser');
      const other = await passwordUser(api, 'other');
      const create = (body: Record<string, unknown>) => api.call('POST', '/sessions', { sessionToken: user.token, body });
      const chosenUser = await create({ user: { __type: 'Pointer', className: '_User', objectId: other.id } });
      const chosenToken = await create({ sessionToken: 'r:chosen' });
      const chosenExpiry = await create({ expiresAt: { __type: 'Date', iso: '2100-01-01T00:00:00.000Z' } });
      return [
        chosenUser,
        chosenToken,
        chosenToken.body.sessionToken === 'r:chosen',
        chosenExpiry,
        Date.parse(chosenExpiry.body.expiresAt?.iso) < Date.parse('2099-01-01'),
        await create({ createdWith: { action: 'signup' } }),
        await create({ objectId: 'chosen1234' }),
        await create({ ACL: { '*': { read: true } } }),
        await create({ installationId: 5 }),
        await api.call('POST', '/sessions', { body: {} }),
      ];
    },
  },
  {
    name: 'createdWith of sign-up, password login and anonymous sign-up and login sessions',
    run: async (api) => {
      const user = await passwordUser(api, 'createdwith');
      const login = await api.call('POST', '/login', { body: { username: user.username, password: 'pw' } });
      const anonymousId = `${api.cls('anon')}-0000-4000-8000-000000000000`;
      const anonymous = await api.call('POST', '/users', { body: { authData: { anonymous: { id: anonymousId } } } });
      const again = await api.call('POST', '/users', { body: { authData: { anonymous: { id: anonymousId } } } });
      const createdWith = async (token: string) => (await api.call('GET', '/sessions/me', { sessionToken: token })).body.createdWith;
      return [
        maskUsername(anonymous),
        maskUsername(again),
        await createdWith(user.token),
        await createdWith(login.body.sessionToken),
        await createdWith(anonymous.body.sessionToken),
        await createdWith(again.body.sessionToken),
      ];
    },
  },
  {
    name: 'an expired session answers 209 "Session token is expired." on users/me and a query; sessions/me still answers it',
    errorText: true,
    run: async (api) => {
      const user = await passwordUser(api, 'expired');
      const expired = await expire(api, await sessionIdOf(api, user.token));
      return [
        expired,
        await api.call('GET', '/users/me', { sessionToken: user.token }),
        withoutAcl(await api.call('GET', '/sessions/me', { sessionToken: user.token })),
        await api.call('GET', `/classes/${api.cls('Anything')}`, { sessionToken: user.token }),
        await api.call('GET', '/users/me', { sessionToken: 'r:unknownunknownunknownunknown000' }),
      ];
    },
  },
  // ---- installations
  {
    name: 'an installationId-only row and a deviceToken-only row merge: the deviceToken row is kept (duplicateDeviceTokenMergePriority)',
    run: async (api) => {
      const installationId = `${api.cls('inst').toLowerCase()}-0000-4000-8000-000000000000`;
      const deviceToken = `token-${api.cls('device')}`;
      const byId = await api.call('POST', '/installations', { body: { deviceType: 'ios', installationId, channels: ['a'] } });
      const byToken = await api.call('POST', '/installations', { body: { deviceType: 'ios', deviceToken, badge: 3 } });
      const merged = await api.call('POST', '/installations', { body: { deviceType: 'ios', installationId, deviceToken } });
      const rows = await api.call('GET', '/installations', { master: true, query: { where: { $or: [{ installationId }, { deviceToken }] } } });
      return [byId, byToken, updateAnswer(merged), rows];
    },
  },
  {
    name: 'a deviceToken-only row and an installationId-only row merge through a PUT of the installationId row',
    run: async (api) => {
      const installationId = `${api.cls('put').toLowerCase()}-0000-4000-8000-000000000000`;
      const deviceToken = `token-${api.cls('putdevice')}`;
      const byId = await api.call('POST', '/installations', { body: { deviceType: 'android', installationId } });
      const byToken = await api.call('POST', '/installations', { body: { deviceType: 'android', deviceToken } });
      const put = await api.call('PUT', `/installations/${byId.body.objectId}`, { body: { deviceToken, channels: ['b'] } });
      const rows = await api.call('GET', '/installations', { master: true, query: { where: { $or: [{ installationId }, { deviceToken }] } } });
      return [byId, byToken, put, rows];
    },
  },
  {
    name: 'the X-Parse-Installation-Id header alone is not written as the installationId; it finds the installation that has it',
    run: async (api) => {
      const header = `${api.cls('hdr').toLowerCase()}-0000-4000-8000-000000000000`;
      const headers = { 'X-Parse-Installation-Id': header };
      const created = await api.call('POST', '/installations', { headers, body: { deviceType: 'android', channels: ['x'] } });
      const again = await api.call('POST', '/installations', { headers, body: { deviceType: 'android', channels: ['y'] } });
      const named = await api.call('POST', '/installations', { body: { deviceType: 'android', installationId: header } });
      const found = await api.call('POST', '/installations', { headers, body: { channels: ['z'] } });
      const rows = await api.call('GET', '/installations', { master: true, query: { where: { objectId: { $in: [created.body.objectId, again.body.objectId, named.body.objectId] } }, order: 'createdAt' } });
      return [created, updateAnswer(again), named, updateAnswer(found), rows];
    },
  },
];

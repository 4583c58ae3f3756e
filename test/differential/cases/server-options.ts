import type { CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: server options. The Backend App runs
 * with the defaults and the oracle with Parse Server 9's (plus allowClientClassCreation), so these
 * show that the defaults behave alike.
 */

const mount = (api: CaseApi) => (api.side === 'parse' ? '/parse' : '/data');

/** Signs a user up with the REST key; `extra` fields go in the body. */
async function signUp(api: CaseApi, base: string, extra: Record<string, unknown> = {}) {
  const username = api.cls(base).toLowerCase();
  const answer = await api.call('POST', '/users', { body: { username, password: 'p4ss', ...extra } });
  return { username, id: answer.body.objectId as string, token: answer.body.sessionToken as string, answer };
}

export const cases: DiffCase[] = [
  {
    name: 'enforcePrivateUsers: a new user has only its own ACL entry, and other clients cannot read it',
    run: async (api) => {
      const user = await signUp(api, 'private');
      const other = await signUp(api, 'other');
      return [
        user.answer,
        await api.call('GET', `/users/${user.id}`, { master: true }),
        await api.call('GET', `/users/${user.id}`),
        await api.call('GET', `/users/${user.id}`, { sessionToken: other.token }),
        await api.call('GET', '/users', { query: { where: { username: user.username } }, sessionToken: other.token }),
      ];
    },
  },
  {
    name: 'protectedFields: _User email hidden from other users by default, even when the user is public',
    run: async (api) => {
      const user = await signUp(api, 'public', { email: `${api.cls('pub').toLowerCase()}@example.com`, ACL: { '*': { read: true } } });
      const other = await signUp(api, 'reader');
      const seen = await api.call('GET', `/users/${user.id}`, { sessionToken: other.token });
      return [seen.status, Object.keys(seen.body).sort(), (await api.call('GET', `/users/${user.id}`, { sessionToken: user.token })).body.email !== undefined];
    },
  },
  {
    name: 'sessionLength and expireInactiveSessions: a new session expires one year after it was made',
    run: async (api) => {
      const user = await signUp(api, 'session');
      const sessions = await api.call('GET', '/sessions', { sessionToken: user.token });
      const session = sessions.body.results[0];
      return [sessions.body.results.length, Math.round((Date.parse(session.expiresAt.iso) - Date.parse(session.createdAt)) / 86_400_000)];
    },
  },
  {
    name: 'revokeSessionOnPasswordReset: a password change ends the user\'s other sessions and gives the client a new one',
    run: async (api) => {
      const user = await signUp(api, 'revoke');
      const second = await api.call('POST', '/login', { body: { username: user.username, password: 'p4ss' }, headers: { 'X-Parse-Installation-Id': 'device-2' } });
      const changed = await api.call('PUT', `/users/${user.id}`, { body: { password: 'n3w' }, sessionToken: user.token });
      return [
        changed,
        await api.call('GET', '/users/me', { sessionToken: second.body.sessionToken }),
        (await api.call('GET', '/users/me', { sessionToken: changed.body.sessionToken })).status,
      ];
    },
  },
  {
    name: 'preventLoginWithUnverifiedEmail is off: a user whose emailVerified is false logs in',
    run: async (api) => {
      const user = await signUp(api, 'unverified', { email: `${api.cls('unv').toLowerCase()}@example.com` });
      await api.call('PUT', `/users/${user.id}`, { master: true, body: { emailVerified: false } });
      const login = await api.call('POST', '/login', { body: { username: user.username, password: 'p4ss' } });
      return [login.status, login.body.emailVerified, typeof login.body.sessionToken];
    },
  },
  {
    name: 'fileUpload: no upload without a session; a logged-in user uploads; active content is refused',
    run: async (api) => {
      const user = await signUp(api, 'uploader');
      const text = { 'content-type': 'text/plain' };
      const upload = await api.call('POST', '/files/notes.txt', { body: 'hello', contentType: 'text/plain', headers: text, sessionToken: user.token });
      return [
        await api.call('POST', '/files/notes.txt', { body: 'hello', contentType: 'text/plain', headers: text }),
        [upload.status, typeof upload.body.url, /_notes\.txt$/.test(upload.body.name)],
        await api.call('POST', '/files/page.html', { body: '<p>hi</p>', contentType: 'text/html', sessionToken: user.token }),
      ];
    },
  },
  {
    name: 'defaultLimit: a query without a limit answers 100 objects',
    run: async (api) => {
      const cls = api.cls('Many');
      for (let start = 0; start < 120; start += 40) {
        const requests = Array.from({ length: 40 }, (_, i) => ({ method: 'POST', path: `${mount(api)}/classes/${cls}`, body: { n: start + i } }));
        await api.call('POST', '/batch', { body: { requests }, master: true });
      }
      const all = await api.call('GET', `/classes/${cls}`);
      const big = await api.call('GET', `/classes/${cls}`, { query: { limit: 1000, where: { n: { $gte: 0 } }, count: 1 } });
      return [all.body.results.length, big.body.results.length, big.body.count];
    },
  },
  {
    name: 'allowClientClassCreation (as both run): a client creates a class by saving its first object',
    run: async (api) => {
      const cls = api.cls('ClientMade');
      return [await api.call('POST', `/classes/${cls}`, { body: { a: 1 } }), await api.call('GET', `/classes/${cls}`)];
    },
  },
];

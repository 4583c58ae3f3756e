import type { Answer, CaseApi, DiffCase } from '../harness.js';

/** Differential cases: requests-users: form bodies, writes to other users, anonymous users. */

const FORM = 'application/x-www-form-urlencoded';

/** Parse Server names a user signing up through a provider with 25 random letters and digits; compared by shape. */
const RANDOM_USERNAME = /^[A-Za-z0-9]{25}$/;
const maskUsername = (answer: Answer): Answer =>
  typeof answer.body?.username === 'string' && RANDOM_USERNAME.test(answer.body.username) ? { ...answer, body: { ...answer.body, username: '<random username>' } } : answer;

/** A user signed up with a password; `name` is unique per run. */
async function passwordUser(api: CaseApi, base: string): Promise<{ id: string; token: string; username: string }> {
  const username = api.cls(base).toLowerCase();
  const { body } = await api.call('POST', '/users', { body: { username, password: 'pw' } });
  return { id: body.objectId, token: body.sessionToken, username };
}

/** An anonymous user (what `Parse.AnonymousUtils.logIn` sends), with its id. */
async function anonymousUser(api: CaseApi, base: string): Promise<{ id: string; token: string; anonymousId: string; signup: Answer }> {
  const anonymousId = `${api.cls(base)}-0000-4000-8000-000000000000`;
  const signup = await api.call('POST', '/users', { body: { authData: { anonymous: { id: anonymousId } } } });
  return { id: signup.body.objectId, token: signup.body.sessionToken, anonymousId, signup: maskUsername(signup) };
}

const bodyOf = (body: Record<string, unknown>) => ({ body });

export const cases: DiffCase[] = [
  // ---- item 1: form-encoded bodies
  {
    name: 'form body: key=value pairs create, update and delete objects (strings, repeated keys as arrays)',
    run: async (api) => {
      const cls = api.cls('Form');
      const created = await api.call('POST', `/classes/${cls}`, { body: 'name=a+b%20c&n=1&n=2&empty=', contentType: FORM });
      const id = created.body.objectId;
      return [
        created,
        await api.call('GET', `/classes/${cls}/${id}`),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: 'name=zz', contentType: `${FORM}; charset=utf-8` }),
        await api.call('GET', `/classes/${cls}/${id}`),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: 'n=5', contentType: FORM }),
        await api.call('DELETE', `/classes/${cls}/${id}`, { body: 'ignored=1', contentType: FORM }),
        await api.call('GET', `/classes/${cls}/${id}`),
      ];
    },
  },
  {
    name: 'form body: empty, a query through _method=GET, a nested key (105) and a batch (107)',
    run: async (api) => {
      const cls = api.cls('FormQuery');
      await api.call('POST', `/classes/${cls}`, bodyOf({ name: 'found' }));
      const where = encodeURIComponent(JSON.stringify({ name: 'found' }));
      return [
        await api.call('POST', `/classes/${cls}`, { body: '', contentType: FORM }),
        await api.call('POST', `/classes/${cls}`, { body: `_method=GET&where=${where}&keys=name`, contentType: FORM }),
        await api.call('POST', `/classes/${cls}`, { body: 'a%5Bb%5D=1', contentType: FORM }),
        await api.call('POST', '/batch', { body: 'requests=%5B%5D', contentType: FORM }),
      ];
    },
  },
  {
    name: 'form body: signup and login',
    run: async (api) => {
      const username = api.cls('formuser').toLowerCase();
      return [
        await api.call('POST', '/users', { body: `username=${username}&password=p%26w`, contentType: FORM }),
        // The login answer's ACL depends on enforcePrivateUsers (on by default in both).
        await api.call('POST', '/login', { body: `username=${username}&password=p%26w`, contentType: FORM }),
        await api.call('POST', '/login', { body: `username=${username}&password=wrong`, contentType: FORM }),
      ];
    },
  },
  {
    name: 'form body: a JSON document sent as a form is read as JSON',
    known: {
      reason: 'Parse Server takes the whole JSON text for one field name and answers 105; Backyard reads the JSON (curl -d sends JSON with this type)',
      backyard: [{ status: 201, body: { objectId: '<id1>', createdAt: '<date>' } }, { status: 200, body: { objectId: '<id1>', createdAt: '<date>', updatedAt: '<date>', score: 1 } }],
    },
    run: async (api) => {
      const cls = api.cls('FormJson');
      const created = await api.call('POST', `/classes/${cls}`, { body: '{"score":1}', contentType: FORM });
      return [created, await api.call('GET', `/classes/${cls}/${created.body.objectId}`)];
    },
  },

  // ---- item 2: writes to another user
  {
    name: 'saving or deleting another user, or a missing one, with a session answers 206',
    run: async (api) => {
      const carol = await passwordUser(api, 'carol');
      const dave = await passwordUser(api, 'dave');
      const answers: Answer[] = [];
      for (const base of ['/users', '/classes/_User']) {
        answers.push(await api.call('PUT', `${base}/${carol.id}`, { sessionToken: dave.token, body: { x: 1 } }));
        answers.push(await api.call('PUT', `${base}/${carol.id}`, { sessionToken: dave.token, body: {} }));
        answers.push(await api.call('DELETE', `${base}/${carol.id}`, { sessionToken: dave.token }));
        answers.push(await api.call('PUT', `${base}/abcdefghij`, { sessionToken: dave.token, body: { x: 1 } }));
        answers.push(await api.call('DELETE', `${base}/abcdefghij`, { sessionToken: dave.token }));
      }
      answers.push(await api.call('PUT', `/users/${carol.id}`, { body: { x: 1 } }));
      answers.push(await api.call('DELETE', `/users/${carol.id}`));
      // The body is checked before the permission, as in Parse Server.
      answers.push(await api.call('PUT', `/users/${carol.id}`, { sessionToken: dave.token, body: { emailVerified: true } }));
      answers.push(await api.call('GET', `/users/${carol.id}`, { master: true }));
      answers.push(await api.call('PUT', '/users/abcdefghij', { master: true, body: { x: 1 } }));
      return answers;
    },
  },
  {
    name: "another user's update with a taken username answers 206, not 202",
    known: {
      reason: 'Parse Server checks uniqueness before the permission (202 tells another user which names exist); Backyard refuses first',
      backyard: [{ status: 400, body: { code: 206, error: '<error>' } }],
    },
    run: async (api) => {
      const carol = await passwordUser(api, 'carol');
      const dave = await passwordUser(api, 'dave');
      return [await api.call('PUT', `/users/${carol.id}`, { sessionToken: dave.token, body: { username: dave.username } })];
    },
  },

  // ---- item 3: anonymous users
  {
    name: 'anonymous signup, a second login with the same id, users/me',
    run: async (api) => {
      const anon = await anonymousUser(api, 'anon');
      const again = await api.call('POST', '/users', bodyOf({ authData: { anonymous: { id: anon.anonymousId } }, ignored: 1 }));
      // Both answers carry the user's ACL, which depends on enforcePrivateUsers (on by default in both).
      return [anon.signup, maskUsername(again), maskUsername(await api.call('GET', '/users/me', { sessionToken: anon.token }))];
    },
  },
  {
    name: 'anonymous signup with fields, an empty username, a password, a taken username; emailVerified is refused',
    run: async (api) => {
      const id = (n: string) => ({ anonymous: { id: `${api.cls(n)}-0000-4000-8000-000000000000` } });
      const named = api.cls('named').toLowerCase();
      const withFields = await api.call('POST', '/users', bodyOf({ authData: id('a'), username: named, score: 3 }));
      return [
        withFields,
        maskUsername(await api.call('POST', '/users', bodyOf({ authData: id('b'), username: '' }))),
        maskUsername(await api.call('POST', '/users', bodyOf({ authData: id('c'), password: 'pw' }))),
        await api.call('POST', '/users', bodyOf({ authData: id('d'), username: named })),
        await api.call('POST', '/users', bodyOf({ authData: id('e'), emailVerified: true })),
        maskUsername(await api.call('POST', '/users', bodyOf({ authData: id('a'), score: 4 }))),
      ];
    },
  },
  {
    name: 'upgrading an anonymous user: username and password keep the link; authData {anonymous: null} removes it',
    run: async (api) => {
      const anon = await anonymousUser(api, 'anon');
      const username = api.cls('upgraded').toLowerCase();
      const upgrade = await api.call('PUT', `/users/${anon.id}`, { sessionToken: anon.token, body: { username, password: 'pw' } });
      const token = upgrade.body.sessionToken;
      return [
        upgrade,
        await api.call('GET', '/users/me', { sessionToken: token }),
        await api.call('PUT', `/users/${anon.id}`, { sessionToken: token, body: { authData: { anonymous: null } } }),
        await api.call('GET', '/users/me', { sessionToken: token }),
        await api.call('POST', '/login', bodyOf({ username, password: 'pw' })),
        // The old anonymous id is free again: it signs a new user up.
        maskUsername(await api.call('POST', '/users', bodyOf({ authData: { anonymous: { id: anon.anonymousId } } }))),
      ];
    },
  },
  {
    name: 'linking: an id another user holds answers 208; authData {} and unlinking an unknown provider are accepted',
    run: async (api) => {
      const first = await anonymousUser(api, 'first');
      const second = await anonymousUser(api, 'second');
      const fresh = `${api.cls('fresh')}-0000-4000-8000-000000000000`;
      return [
        await api.call('PUT', `/users/${second.id}`, { sessionToken: second.token, body: { authData: { anonymous: { id: first.anonymousId } } } }),
        await api.call('POST', '/users', { sessionToken: second.token, body: { authData: { anonymous: { id: first.anonymousId } } } }),
        await api.call('PUT', `/users/${second.id}`, { sessionToken: second.token, body: { authData: { anonymous: { id: fresh } } } }),
        maskUsername(await api.call('GET', '/users/me', { sessionToken: second.token })),
        await api.call('PUT', `/users/${second.id}`, { sessionToken: second.token, body: { authData: {} } }),
        await api.call('PUT', `/users/${second.id}`, { sessionToken: second.token, body: { authData: { foo: null } } }),
        await api.call('PUT', `/users/${second.id}`, { sessionToken: second.token, body: { authData: null } }),
        await api.call('PUT', `/users/${second.id}`, { sessionToken: second.token, body: { authData: { foo: { id: '1' } } } }),
      ];
    },
  },
  {
    name: 'bad authData on signup: 200 without usable provider data, 252 for other providers, 162 for a non-string id',
    errorText: true,
    run: async (api) => {
      const signup = (body: Record<string, unknown>) => api.call('POST', '/users', bodyOf(body));
      const uuid = `${api.cls('x')}-0000-4000-8000-000000000000`;
      return [
        await signup({ authData: null }),
        await signup({ authData: {} }),
        await signup({ authData: { anonymous: {} } }),
        await signup({ authData: { anonymous: null } }),
        await signup({ authData: { anonymous: 'x' } }),
        await signup({ authData: { foo: { id: 'x' } } }),
        await signup({ authData: { anonymous: { id: uuid }, foo: { id: 'x' } } }),
        await signup({ authData: { anonymous: { id: 5 } } }),
        await signup({ username: api.cls('eve').toLowerCase(), authData: { anonymous: {} } }),
      ];
    },
  },
  {
    name: 'signup with username, password and authData {anonymous: null} answers authDataResponse',
    run: async (api) => [await api.call('POST', '/users', bodyOf({ username: api.cls('n').toLowerCase(), password: 'pw', authData: { anonymous: null } }))],
  },
  {
    name: 'anonymous authData without an id is refused',
    known: {
      reason: 'Parse Server accepts it and makes a user nobody can log in as again; Backyard answers 162',
      backyard: [{ status: 400, body: { code: 162, error: '<error>' } }, { status: 400, body: { code: 162, error: '<error>' } }],
    },
    run: async (api) => [
      await api.call('POST', '/users', bodyOf({ authData: { anonymous: { foo: 1 } } })),
      await api.call('POST', '/users', bodyOf({ authData: { anonymous: { id: '' } } })),
    ],
  },
  {
    name: 'a built-in provider the app has not configured (facebook) answers 101 "Facebook auth is not configured."',
    errorText: true,
    run: async (api) => [await api.call('POST', '/users', bodyOf({ authData: { facebook: { id: '1', access_token: 'x' } } }))],
  },
  {
    name: "authData is another user's secret: hidden, and not queryable by clients",
    known: {
      reason: "Parse Server lets clients query authData (a $regex on a public user's anonymous id reads it out); Backyard refuses with 119 as for email",
      backyard: [{ status: 400, body: { code: 119, error: '<error>' } }, { status: 400, body: { code: 119, error: '<error>' } }],
    },
    run: async (api) => {
      const anon = await anonymousUser(api, 'anon');
      const other = await passwordUser(api, 'other');
      const where = { 'authData.anonymous.id': anon.anonymousId };
      return [
        await api.call('GET', '/users', { sessionToken: other.token, query: { where } }),
        await api.call('GET', '/users', { sessionToken: anon.token, query: { where } }),
      ];
    },
  },
  {
    name: 'the master key reads authData',
    run: async (api) => {
      const anon = await anonymousUser(api, 'anon');
      return [maskUsername(await api.call('GET', `/users/${anon.id}`, { master: true }))];
    },
  },
  {
    name: "an anonymous signup's session says how it was made",
    run: async (api) => {
      const anon = await anonymousUser(api, 'anon');
      await api.call('POST', '/users', bodyOf({ authData: { anonymous: { id: anon.anonymousId } } }));
      const sessions = await api.call('GET', '/sessions', { master: true, query: { where: { user: { __type: 'Pointer', className: '_User', objectId: anon.id } }, order: 'createdAt' } });
      return [{ status: sessions.status, body: { results: sessions.body.results.map((s: { createdWith: unknown }) => s.createdWith) } }];
    },
  },
];

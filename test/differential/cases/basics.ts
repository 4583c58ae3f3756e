import type { DiffCase } from '../harness.js';

/** Differential cases: the REST guide's basics (objects, queries, batch, users). */
export const cases: DiffCase[] = [
  {
    name: 'create, get, update with operators, delete, then get answers 101',
    run: async (api) => {
      const cls = api.cls('Score');
      const created = await api.call('POST', `/classes/${cls}`, { body: { score: 1337, playerName: 'Sean Plott', cheatMode: false, tags: ['a'] } });
      const id = created.body.objectId;
      return [
        created,
        await api.call('GET', `/classes/${cls}/${id}`),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { score: { __op: 'Increment', amount: 2 }, tags: { __op: 'AddUnique', objects: ['a', 'b'] } } }),
        await api.call('GET', `/classes/${cls}/${id}`),
        await api.call('DELETE', `/classes/${cls}/${id}`),
        await api.call('GET', `/classes/${cls}/${id}`),
      ];
    },
  },
  {
    name: 'query with where, order, limit, skip and count',
    run: async (api) => {
      const cls = api.cls('Player');
      for (const [name, score] of [['a', 3], ['b', 1], ['c', 2], ['d', 5]] as const) await api.call('POST', `/classes/${cls}`, { body: { name, score } });
      return [
        await api.call('GET', `/classes/${cls}`, { query: { where: { score: { $gte: 2 } }, order: '-score', keys: 'name,score' } }),
        await api.call('GET', `/classes/${cls}`, { query: { where: { score: { $gt: 0 } }, count: 1, limit: 1, skip: 1, order: 'name' } }),
        await api.call('GET', `/classes/${cls}`, { query: { where: { name: { $in: ['a', 'd'] } }, order: 'score' } }),
      ];
    },
  },
  {
    name: 'an unknown query parameter answers 102',
    run: async (api) => [await api.call('GET', `/classes/${api.cls('Nothing')}`, { query: { wat: 1 } })],
  },
  {
    name: 'batch of creates and an update of a missing object',
    run: async (api) => {
      const cls = api.cls('Batched');
      return [
        await api.call('POST', '/batch', {
          body: {
            requests: [
              { method: 'POST', path: `${api.side === 'parse' ? '/parse' : '/data'}/classes/${cls}`, body: { n: 1 } },
              { method: 'PUT', path: `${api.side === 'parse' ? '/parse' : '/data'}/classes/${cls}/abcdefghij`, body: { n: 2 } },
            ],
          },
        }),
      ];
    },
  },
  {
    name: 'sign up, log in, users/me and a wrong password',
    run: async (api) => {
      const username = api.cls('user').toLowerCase();
      const signup = await api.call('POST', '/users', { body: { username, password: 'p4ss', phone: '415-392-0202' }, headers: { 'X-Parse-Revocable-Session': '1' } });
      const login = await api.call('POST', '/login', { body: { username, password: 'p4ss' } });
      return [
        signup,
        login,
        await api.call('GET', '/users/me', { sessionToken: login.body.sessionToken }),
        await api.call('POST', '/login', { body: { username, password: 'wrong' } }),
      ];
    },
  },
];

import type { CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: query parameters and keys: `keys`,
 * `excludeKeys` and `include` as the JS SDK sends them, `includeAll`, keys inside included objects,
 * dangling pointers and `redirectClassNameForKey`.
 */

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });

/**
 * A `Post` whose `author` points to an `Author` whose `team` points to a `Team`, with `tags` an array
 * of pointers (one to a deleted `Author`), `gone` a pointer to the deleted one and `meta` an Object.
 */
async function world(api: CaseApi) {
  const [post, author, team] = [api.cls('Post'), api.cls('Author'), api.cls('Team')];
  const t = await api.call('POST', `/classes/${team}`, { body: { key: 'deep', other: 'x' } });
  const a = await api.call('POST', `/classes/${author}`, { body: { key: 'v', other: 'o', team: pointer(team, t.body.objectId) } });
  const deleted = await api.call('POST', `/classes/${author}`, { body: { key: 'gone' } });
  await api.call('DELETE', `/classes/${author}/${deleted.body.objectId}`);
  const p = await api.call('POST', `/classes/${post}`, {
    body: {
      fizz: 'buzz',
      foo: 'bar',
      author: pointer(author, a.body.objectId),
      tags: [pointer(author, a.body.objectId), pointer(author, deleted.body.objectId)],
      gone: pointer(author, deleted.body.objectId),
      meta: { x: 1, y: 2 },
      ACL: { '*': { read: true } },
    },
  });
  const find = (query: Record<string, unknown>) => api.call('GET', `/classes/${post}`, { query });
  const get = (query: Record<string, unknown>) => api.call('GET', `/classes/${post}/${p.body.objectId}`, { query });
  return { post, find, get };
}

export const cases: DiffCase[] = [
  {
    name: 'keys, excludeKeys and include given as JSON array strings, as the JS SDK sends them',
    run: async (api) => {
      const { find, get } = await world(api);
      return [
        await find({ keys: '["fizz","foo"]' }),
        await find({ excludeKeys: '["fizz","meta"]' }),
        await find({ include: '["author"]', keys: '["author"]' }),
        await get({ keys: '["foo"]' }),
      ];
    },
  },
  {
    name: 'includeAll=true and include=* follow every pointer and array of pointers, also with keys',
    run: async (api) => {
      const { find, get } = await world(api);
      return [await find({ includeAll: 'true' }), await find({ include: '*' }), await find({ includeAll: true, keys: 'fizz' }), await get({ include: '["*"]' })];
    },
  },
  {
    name: 'nested keys select inside included objects, one and two levels deep',
    run: async (api) => {
      const { find, get } = await world(api);
      return [await find({ keys: 'fizz,author.key' }), await find({ keys: 'fizz,author.team.key' }), await get({ keys: 'author.other' }), await find({ keys: 'meta.x' })];
    },
  },
  {
    name: 'nested excludeKeys remove inside included objects; ACL and the dates cannot be excluded',
    run: async (api) => {
      const { find } = await world(api);
      return [await find({ excludeKeys: 'author.key,tags,gone' }), await find({ excludeKeys: 'ACL,meta,createdAt' })];
    },
  },
  {
    name: 'ACL is returned when keys are given',
    run: async (api) => {
      const { find } = await world(api);
      return [await find({ keys: 'foo' }), await find({ keys: 'foo', excludeKeys: 'foo' })];
    },
  },
  {
    name: 'include of a deleted object drops the dangling pointer, alone and in arrays',
    run: async (api) => {
      const { find, get } = await world(api);
      return [await find({ include: 'gone,tags', keys: 'gone,tags' }), await get({ include: 'gone' }), await find({ keys: 'gone,tags' })];
    },
  },
  {
    name: 'redirectClassNameForKey answers the related objects with their className',
    run: async (api) => {
      const [owner, item] = [api.cls('Owner'), api.cls('Item')];
      const i = await api.call('POST', `/classes/${item}`, { body: { name: 'one' } });
      const o = await api.call('POST', `/classes/${owner}`, { body: { items: { __op: 'AddRelation', objects: [pointer(item, i.body.objectId)] } } });
      const where = { $relatedTo: { object: pointer(owner, o.body.objectId), key: 'items' } };
      return [
        await api.call('GET', `/classes/${owner}`, { query: { where, redirectClassNameForKey: 'items' } }),
        await api.call('GET', `/classes/${owner}`, { query: { where, redirectClassNameForKey: 'items', keys: 'name' } }),
      ];
    },
  },
  {
    name: 'a request for one object takes only keys, include, excludeKeys and read preferences (102 otherwise)',
    run: async (api) => {
      const { get } = await world(api);
      return [await get({ limit: 1 }), await get({ count: 1 }), await get({ where: {} }), await get({ order: 'foo' }), await get({ foo: 1 }), await get({ keys: 'foo', readPreference: 'PRIMARY' })];
    },
  },
];

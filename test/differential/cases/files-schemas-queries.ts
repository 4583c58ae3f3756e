import type { Answer, CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: files-schemas-queries: uploads and their names and types, the metadata route,
 * legacy file names; /schemas edge cases; nested keys, sub-queries on missing classes, polygons,
 * date groups, regex sanitizing and purges.
 */

/**
 * The parts of a file URL that do not depend on the server: each side's URL names its own host,
 * mount and application (docs/parse-differences.md, "Files"), so only the last path segment
 * (the stored name, URL-encoded) is compared, with the random 32-hex prefix masked.
 */
const fileTail = (url: unknown): unknown => (typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1).replace(/^[0-9a-f]{32}_/, '<hex>_') : url);

/** An upload's answer with its URL and name reduced to what both servers share. */
function upload(answer: Answer): Answer {
  if (answer.status !== 201) return answer;
  return { status: answer.status, body: { url: fileTail(answer.body.url), name: fileTail(answer.body.name) } };
}

/**
 * A `/schemas` answer without what differs by storage (as in objects-schemas.ts): Parse Server on
 * PostgreSQL leaves out the implicit `_id_` index and adds its default-ACL permission.
 */
function slim(answer: Answer): Answer {
  if (answer.status !== 200 || !answer.body?.className) return answer;
  const { indexes: _indexes, classLevelPermissions, ...rest } = answer.body;
  const { ACL: _acl, ...clp } = classLevelPermissions ?? {};
  return { status: answer.status, body: { ...rest, classLevelPermissions: clp } };
}

/** GET of an address outside the API's keyed routes: status and body (JSON when it is). */
async function json(address: string): Promise<Answer> {
  const response = await fetch(address);
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** Downloads a file by the URL a server answered: status, content type and bytes as text. */
async function download(url: string): Promise<unknown> {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

export const cases: DiffCase[] = [
  {
    name: 'files: an empty upload answers 130, an upload without a name 122',
    errorText: true,
    run: async (api) => [
      await api.call('POST', '/files/empty.txt', { master: true, body: '', contentType: 'text/plain' }),
      await api.call('POST', '/files', { master: true, body: 'hello', contentType: 'text/plain' }),
      await api.call('POST', '/files/', { master: true, body: 'hello', contentType: 'text/plain' }),
    ],
  },
  {
    name: 'files: a name that needs URL encoding is answered encoded in the URL and served back',
    run: async (api) => {
      const saved = await api.call('POST', `/files/${encodeURIComponent('my file@1.txt')}`, { master: true, body: 'spaced', contentType: 'text/plain' });
      return [upload(saved), await download(saved.body.url)];
    },
  },
  {
    name: 'files: the content type follows the extension; a name without one gets the type\'s',
    run: async (api) => {
      const out: unknown[] = [];
      for (const [name, type] of [
        ['a.pdf', 'application/octet-stream'],
        ['b.png', 'text/plain'],
        ['c.json', 'application/json'],
        ['d.csv', 'text/plain'],
        ['e.ico', 'application/octet-stream'],
        ['f.heic', 'application/octet-stream'],
        ['g.yaml', 'text/plain'],
        ['h.doc', 'application/octet-stream'],
        ['noext', 'image/png'],
        ['noext2', 'application/pdf'],
        ['noext3', 'text/plain'],
      ] as const) {
        const saved = await api.call('POST', `/files/${name}`, { master: true, body: 'x', contentType: type });
        out.push(upload(saved), saved.status === 201 ? await download(saved.body.url) : null);
      }
      return out;
    },
  },
  {
    name: 'files: the metadata route answers {} for an unknown file and an unknown application',
    run: async (api) => {
      const saved = await api.call('POST', '/files/meta.txt', { master: true, body: 'm', contentType: 'text/plain' });
      const base = saved.body.url.slice(0, saved.body.url.lastIndexOf('/'));
      const root = base.slice(0, base.lastIndexOf('/'));
      return [await json(`${base}/metadata/nothing.txt`), await json(`${root}/unknownApp/metadata/${saved.body.name}`), await json(`${base}/metadata/`)];
    },
  },
  {
    name: 'files: the metadata route answers a stored file\'s metadata',
    known: {
      reason: 'Parse Server answers {metadata} only through a files adapter that keeps it (GridFS); its file system adapter (the oracle\'s) answers {}',
      backyard: [{ status: 200, body: { metadata: { owner: 'me' } } }, { status: 200, body: { metadata: {} } }],
    },
    run: async (api) => {
      const tagged = await api.call('POST', '/files/tagged.txt', { master: true, body: { base64: 'aGk=', fileData: { metadata: { owner: 'me' } } } });
      const plain = await api.call('POST', '/files/plain.txt', { master: true, body: 'p', contentType: 'text/plain' });
      const metadataOf = (url: string) => json(`${url.slice(0, url.lastIndexOf('/'))}/metadata/${url.slice(url.lastIndexOf('/') + 1)}`);
      return [await metadataOf(tagged.body.url), await metadataOf(plain.body.url)];
    },
  },
  {
    name: 'files: legacy names (tfss-, a UUID and -) are answered at the old parse.com hosts under the file key',
    run: async (api) => {
      const cls = api.cls('Legacy');
      const file = (name: string) => ({ __type: 'File', name });
      const created = await api.call('POST', `/classes/${cls}`, {
        master: true,
        body: { a: file('tfss-0a1b2c3d-picture one.png'), b: file('5e8f8a4c-1d2e-4f3a-9b8c-7d6e5f4a3b2c-photo.jpg'), c: file('3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c_new.txt') },
      });
      const got = await api.call('GET', `/classes/${cls}/${created.body.objectId}`);
      const legacy = (value: { name: string; url: string }) => {
        const url = new URL(value.url);
        return url.hostname.startsWith('files.parse') ? { name: value.name, url: `${url.protocol}//${url.host}/<fileKey>/${fileTail(value.url)}` } : { name: value.name, url: fileTail(value.url) };
      };
      return [created.status, got.status, legacy(got.body.a), legacy(got.body.b), legacy(got.body.c)];
    },
  },
  {
    name: '/schemas without a class name: POST reads it from the body, PUT and DELETE have none',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Named');
      return [
        slim(await api.call('POST', '/schemas', { master: true, body: { className: cls } })),
        await api.call('POST', '/schemas', { master: true, body: {} }),
        await api.call('POST', '/schemas', { master: true, body: { className: 5 } }),
        await api.call('POST', `/schemas/${cls}`, { master: true, body: { className: `${cls}x` } }),
      ];
    },
  },
  {
    name: '/schemas: a second GeoPoint field answers 111 with Parse\'s text',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Geo');
      return [
        await api.call('POST', `/schemas/${api.cls('GeoTwo')}`, { master: true, body: { fields: { a: { type: 'GeoPoint' }, b: { type: 'GeoPoint' } } } }),
        slim(await api.call('POST', `/schemas/${cls}`, { master: true, body: { fields: { a: { type: 'GeoPoint' } } } })),
        await api.call('PUT', `/schemas/${cls}`, { master: true, body: { fields: { b: { type: 'GeoPoint' } } } }),
        await api.call('POST', `/classes/${cls}`, { master: true, body: { b: { __type: 'GeoPoint', latitude: 1, longitude: 2 }, c: { __type: 'GeoPoint', latitude: 1, longitude: 2 } } }),
      ];
    },
  },
  {
    name: '/schemas: fields added to system classes; their own fields cannot be added again',
    errorText: true,
    run: async (api) => {
      const field = api.cls('extra');
      const put = async (cls: string, fields: unknown) => {
        const answer = await api.call('PUT', `/schemas/${cls}`, { master: true, body: { fields } });
        return answer.status === 200 ? { status: 200, field: answer.body.fields[field] ?? null } : answer;
      };
      const out = [
        await put('_User', { [field]: { type: 'String' } }),
        await put('_Role', { [field]: { type: 'Number' } }),
        await put('_User', { username: { type: 'String' } }),
        await put('_User', { email: { type: 'Number' } }),
        await put('_Role', { name: { __op: 'Delete' } }),
        await api.call('POST', '/schemas/_User', { master: true, body: {} }),
        await api.call('POST', '/schemas/_Bogus', { master: true, body: {} }),
      ];
      for (const cls of ['_User', '_Role']) await api.call('PUT', `/schemas/${cls}`, { master: true, body: { fields: { [field]: { __op: 'Delete' } } } });
      return out;
    },
  },
  {
    name: '/schemas: deleting classes with invalid names answers Parse\'s text',
    errorText: true,
    run: async (api) => [
      await api.call('DELETE', '/schemas/1bad', { master: true }),
      await api.call('DELETE', '/schemas/a-b', { master: true }),
      await api.call('DELETE', '/schemas/_Bogus', { master: true }),
      await api.call('DELETE', `/schemas/${api.cls('Missing')}`, { master: true }),
    ],
  },
  {
    name: '/schemas: a class-level permission with an invalid key answers Parse\'s text',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Clp');
      await api.call('POST', `/schemas/${cls}`, { master: true, body: {} });
      const clp = async (classLevelPermissions: unknown) => slim(await api.call('PUT', `/schemas/${cls}`, { master: true, body: { classLevelPermissions } }));
      return [
        await clp({ foo: {} }),
        await clp({ find: { '*': true }, bar: { '*': true } }),
        await clp({ find: { 'role:': true } }),
        await clp({ find: { 'x y': true } }),
        await clp({ find: { '*': 'yes' } }),
        await api.call('POST', `/schemas/${api.cls('ClpNew')}`, { master: true, body: { classLevelPermissions: { baz: {} } } }),
      ];
    },
  },
  {
    name: '/schemas: pointer permissions (readUserFields, writeUserFields) of the regression test for include through them',
    known: {
      reason: 'Backyard does not enforce pointer permissions and refuses them (107) rather than store a guard that does nothing',
      backyard: [{ status: 400, body: { code: 107, error: '<error>' } }],
    },
    run: async (api) => {
      const cls = api.cls('UserProfile');
      await api.call('POST', `/classes/${cls}`, { master: true, body: { n: 1 } });
      return [await api.call('PUT', `/schemas/${cls}`, { master: true, body: { classLevelPermissions: { readUserFields: ['user'], writeUserFields: ['user'] } } })];
    },
  },
  {
    name: '/schemas/_User: the default protectedFields',
    run: async (api) => {
      const answer = await api.call('GET', '/schemas/_User', { master: true });
      return [answer.status, answer.body.classLevelPermissions?.protectedFields];
    },
  },
  {
    name: 'objects: keys holding . or $ inside nested objects answer 121',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Nested');
      const id = (await api.call('POST', `/classes/${cls}`, { body: { o: { a: 1 } } })).body.objectId;
      return [
        await api.call('POST', `/classes/${cls}`, { body: { o: { 'a.b': 1 } } }),
        await api.call('POST', `/classes/${cls}`, { body: { o: { $x: 1 } } }),
        await api.call('POST', `/classes/${cls}`, { body: { o: { deep: { 'x.y': 1 } } } }),
        await api.call('POST', `/classes/${cls}`, { body: { o: { 'a$b': 1 } } }),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { o: { 'a.b': 1 } } }),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { o: { $set: 1 } } }),
        await api.call('POST', `/classes/${cls}`, { body: { list: [{ 'a.b': 1 }] } }),
      ];
    },
  },
  {
    name: 'queries: contains on a key nested in an Object field',
    run: async (api) => {
      const cls = api.cls('Shelf');
      for (const o of [{ name: 'apple', n: 1 }, { name: 'banana', n: 2 }, { name: 'cherry pie', n: 3 }, { other: 1 }]) await api.call('POST', `/classes/${cls}`, { body: { o } });
      const find = async (where: unknown) => {
        const answer = await api.call('GET', `/classes/${cls}`, { query: { where, order: 'o.n', keys: 'o' } });
        return answer.status === 200 ? answer.body.results.map((r: any) => r.o) : answer;
      };
      return [await find({ 'o.name': { $regex: '\\Qrry p\\E' } }), await find({ 'o.name': { $regex: 'an' } }), await find({ 'o.name': { $regex: '^\\Qap\\E' } })];
    },
  },
  {
    name: 'queries: containedIn on a key nested in an Object field',
    known: {
      reason: 'Parse Server on PostgreSQL finds nothing with $in on a key inside an Object field and answers 119 for $nin; MongoDB-backed Parse Server and Backyard match the key',
      backyard: [
        [{ name: 'apple', n: 1 }, { name: 'cherry pie', n: 3 }],
        [{ name: 'banana', n: 2 }, { name: 'cherry pie', n: 3 }],
        [{ other: 1 }, { name: 'banana', n: 2 }, { name: 'cherry pie', n: 3 }],
      ],
    },
    run: async (api) => {
      const cls = api.cls('Shelf');
      for (const o of [{ name: 'apple', n: 1 }, { name: 'banana', n: 2 }, { name: 'cherry pie', n: 3 }, { other: 1 }]) await api.call('POST', `/classes/${cls}`, { body: { o } });
      const find = async (where: unknown) => {
        const answer = await api.call('GET', `/classes/${cls}`, { query: { where, order: 'o.n', keys: 'o' } });
        return answer.status === 200 ? answer.body.results.map((r: any) => r.o) : answer;
      };
      return [
        await find({ 'o.name': { $in: ['apple', 'cherry pie', 'nope'] } }),
        await find({ 'o.n': { $in: [2, 3] } }),
        await find({ 'o.name': { $nin: ['apple'] } }),
      ];
    },
  },
  {
    name: 'queries: containsAllStartingWith with values that are not regexes answers 102',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Tagged');
      await api.call('POST', `/classes/${cls}`, { body: { tags: ['alpha', 'beta'] } });
      const find = async (where: unknown) => {
        const answer = await api.call('GET', `/classes/${cls}`, { query: { where } });
        return answer.status === 200 ? answer.body.results.length : answer;
      };
      return [
        await find({ tags: { $all: [{ $regex: '^\\Qal\\E' }, { $regex: '^\\Qbe\\E' }] } }),
        await find({ tags: { $all: [{ $regex: '^\\Qal\\E' }, 'beta'] } }),
        await find({ tags: { $all: ['alpha', { $regex: '^\\Qbe\\E' }] } }),
        await find({ tags: { $all: [{ $regex: '^\\Qal\\E' }, 5] } }),
      ];
    },
  },
  {
    name: 'queries: $select and $dontSelect over a class that does not exist',
    run: async (api) => {
      const cls = api.cls('Chooser');
      for (const name of ['a', 'b']) await api.call('POST', `/classes/${cls}`, { body: { name } });
      const sub = { query: { className: api.cls('Nowhere'), where: {} }, key: 'name' };
      const find = async (where: unknown) => {
        const answer = await api.call('GET', `/classes/${cls}`, { query: { where, order: 'name', keys: 'name' } });
        return answer.status === 200 ? answer.body.results.map((r: any) => r.name) : answer;
      };
      return [
        await find({ name: { $select: sub } }),
        await find({ name: { $dontSelect: sub } }),
        await find({ name: { $inQuery: { className: api.cls('Nowhere'), where: {} } } }),
        await find({ name: { $notInQuery: { className: api.cls('Nowhere'), where: {} } } }),
      ];
    },
  },
  {
    name: 'queries: equalTo a polygon matches whether the path given is open or closed',
    run: async (api) => {
      const cls = api.cls('Zone');
      const open = [[0, 0], [0, 1], [1, 1]];
      const closed = [[0, 0], [0, 1], [1, 1], [0, 0]];
      await api.call('POST', `/classes/${cls}`, { body: { name: 'tri', p: { __type: 'Polygon', coordinates: open } } });
      await api.call('POST', `/classes/${cls}`, { body: { name: 'square', p: { __type: 'Polygon', coordinates: [[0, 0], [0, 2], [2, 2], [2, 0], [0, 0]] } } });
      const find = async (coordinates: unknown) => {
        const answer = await api.call('GET', `/classes/${cls}`, { query: { where: { p: { __type: 'Polygon', coordinates } }, keys: 'name' } });
        return answer.status === 200 ? answer.body.results.map((r: any) => r.name) : answer;
      };
      return [await find(open), await find(closed), await find([[0, 0], [1, 1], [0, 1]]), await find([[5, 5], [5, 6], [6, 6]])];
    },
  },
  {
    name: 'aggregate: $group by date parts of _created_at and createdAt',
    known: {
      reason: 'Parse Server on PostgreSQL groups by the whole date, one group per instant (the row "Date parts as group keys")',
      backyard: [1, 2, 3].map(() => [{ total: 6, sameDay: true, hour: 'number' }]),
    },
    run: async (api) => {
      const cls = api.cls('Dated');
      const before = new Date();
      for (const n of [1, 2, 3]) await api.call('POST', `/classes/${cls}`, { body: { n } });
      const after = new Date();
      const isDayOf = (key: any, d: Date) => key?.day === d.getUTCDate() && key?.month === d.getUTCMonth() + 1 && key?.year === d.getUTCFullYear();
      const group = async (field: string) => {
        const key = { day: { $dayOfMonth: field }, month: { $month: field }, year: { $year: field }, hour: { $hour: field } };
        const answer = await api.call('GET', `/aggregate/${cls}`, { master: true, query: { pipeline: [{ $group: { _id: key, total: { $sum: '$n' } } }] } });
        // Only the parts' relation to the clock is compared: the objects were made within this case.
        if (answer.status !== 200) return answer;
        return answer.body.results.map((r: any) => ({
          total: r.total,
          sameDay: isDayOf(r.objectId, before) || isDayOf(r.objectId, after),
          hour: typeof r.objectId?.hour,
        }));
      };
      return [await group('$_created_at'), await group('$createdAt'), await group('$_updated_at')];
    },
  },
  {
    name: 'queries: a $regex holding quotes and SQL is matched as a pattern (the regex sanitizer test)',
    run: async (api) => {
      const username = api.cls('sanitized').toLowerCase();
      await api.call('POST', '/users', { body: { username, password: 'p4ss', email: `${username}@example.com` } });
      return [
        await api.call('GET', '/classes/_User', { query: { where: { username: { $regex: "A'B';SELECT PG_SLEEP(3);--" } } } }),
        await api.call('GET', `/classes/_User?where[username][$regex]=${encodeURIComponent("A'B';SELECT PG_SLEEP(3);--")}`),
      ];
    },
  },
  {
    name: 'purge: a class without objects, or that does not exist, answers 200',
    run: async (api) => {
      const cls = api.cls('Purged');
      await api.call('POST', `/schemas/${cls}`, { master: true, body: {} });
      const full = api.cls('Full');
      await api.call('POST', `/classes/${full}`, { body: { a: 1 } });
      return [
        await api.call('DELETE', `/purge/${cls}`, { master: true }),
        await api.call('DELETE', `/purge/${api.cls('Never')}`, { master: true }),
        await api.call('DELETE', `/purge/${full}`, { master: true }),
        await api.call('GET', `/classes/${full}`),
        await api.call('DELETE', '/purge/1bad', { master: true }),
      ];
    },
  },
];

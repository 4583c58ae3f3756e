import fs from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { aggregate as mingoAggregate } from 'mingo';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskFileStore } from '../src/data/diskFiles.js';
import { checkFileName, MAX_FILE_SIZE } from '../src/data/files.js';
import { packageVersion } from '../src/version.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

let server: TestServer;
let appId: string;
let keys: { restKey: string; javascriptKey: string; masterKey: string };
let apiURL: string;

beforeAll(async () => {
  server = await startTestServer();
  const { backendApps, accounts } = server.platform.services;
  appId = (await backendApps.create((await accounts.findByLogin('alice'))!.id, 'files-tests')).appId;
  keys = (await backendApps.keys(appId))!;
  apiURL = `${server.url}/data`;
  Parse.initialize(appId, keys.javascriptKey, keys.masterKey);
  (Parse as unknown as { serverURL: string }).serverURL = apiURL;
});
afterAll(async () => server.close());

interface CallOptions {
  body?: unknown;
  raw?: { data: Uint8Array; type: string };
  master?: boolean;
  noKeys?: boolean;
  sessionToken?: string;
}

/** Calls the data API with the REST key, the master key, or no keys at all. */
async function call(method: string, pathAndQuery: string, options: CallOptions = {}) {
  const headers: Record<string, string> = {};
  if (!options.noKeys) {
    headers['X-Parse-Application-Id'] = appId;
    if (options.master) headers['X-Parse-Master-Key'] = keys.masterKey;
    else headers['X-Parse-REST-API-Key'] = keys.restKey;
  }
  if (options.sessionToken) headers['X-Parse-Session-Token'] = options.sessionToken;
  let body: BodyInit | undefined;
  if (options.raw) {
    body = options.raw.data;
    headers['content-type'] = options.raw.type;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${apiURL}${pathAndQuery}`, { method, headers, body });
  const bytes = Buffer.from(await response.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, bytes, body: json };
}

const download = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
};

const STORED = /^[0-9a-f]{32}_/;

describe('files through the Parse JS SDK', () => {
  it('saves a file from base64 and from a byte array, attaches it to an object and serves it without keys', async () => {
    const text = new Parse.File('hello.txt', { base64: Buffer.from('hello, backyard').toString('base64') });
    await text.save({ useMasterKey: true });
    expect(text.name()).toMatch(new RegExp(`${STORED.source}hello\\.txt$`));
    expect(text.url()).toBe(`${apiURL}/files/${appId}/${text.name()}`);
    const got = await download(text.url()!);
    expect(got.status).toBe(200);
    expect(got.type).toMatch(/^text\/plain/);
    expect(got.bytes.toString()).toBe('hello, backyard');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');

    const bytes = [0, 1, 2, 250, 255, 128];
    const binary = new Parse.File('data.bin', bytes);
    await binary.save({ useMasterKey: true });
    const gotBinary = await download(binary.url()!);
    expect([...gotBinary.bytes]).toEqual(bytes);
    expect(gotBinary.type).toBe('application/octet-stream');

    const doc = new Parse.Object('Doc');
    doc.set('attachment', text);
    doc.set('blob', binary);
    await doc.save();
    const fetched = await new Parse.Query('Doc').get(doc.id!);
    expect(fetched.get('attachment').url()).toBe(text.url());
    expect(fetched.get('attachment').name()).toBe(text.name());
    expect((await download(fetched.get('blob').url())).bytes.equals(Buffer.from(bytes))).toBe(true);
  });

  it('uploads text and JSON files sent as raw bytes, and keeps the content type of base64 uploads', async () => {
    const text = await new Parse.File('notes.txt', [...Buffer.from('plain words')], 'text/plain').save({ useMasterKey: true });
    const got = await fetch(text.url()!);
    expect(await got.text()).toBe('plain words');
    expect(got.headers.get('content-type')).toMatch(/^text\/plain/);
    const json = await new Parse.File('data.json', [...Buffer.from('{"a":1}')], 'application/json').save({ useMasterKey: true });
    expect(await (await fetch(json.url()!)).text()).toBe('{"a":1}');
    const png = await new Parse.File('photo', { base64: Buffer.from([137, 80, 78, 71]).toString('base64') }, 'image/png').save({ useMasterKey: true });
    expect((await fetch(png.url()!)).headers.get('content-type')).toBe('image/png');
  });

  it('uploads a Buffer as raw bytes with its content type, and destroys files with the master key', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const file = new Parse.File('pixel.png', png, 'image/png');
    await file.save({ useMasterKey: true });
    const got = await download(file.url()!);
    expect(got.type).toBe('image/png');
    expect(got.bytes.equals(png)).toBe(true);
    const url = file.url()!;
    await file.destroy({ useMasterKey: true });
    expect((await download(url)).status).toBe(404);
  });

  it('lets a logged-in user upload and refuses callers without a session (Parse Server defaults, 130)', async () => {
    const user = await Parse.User.signUp('uploader', 'secret-pw', {});
    const file = new Parse.File('note.txt', { base64: Buffer.from('mine').toString('base64') });
    await file.save({ sessionToken: user.getSessionToken() });
    expect((await download(file.url()!)).bytes.toString()).toBe('mine');
    await expect(new Parse.File('anon.txt', { base64: 'YQ==' }).save()).rejects.toMatchObject({ code: 130 });
  });
});

describe('files over REST', () => {
  it('takes a raw body with its Content-Type and answers 201 {url, name} with Location', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    const res = await call('POST', '/files/photo.jpg', { master: true, raw: { data: jpeg, type: 'image/jpeg' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ url: `${apiURL}/files/${appId}/${res.body.name}`, name: expect.stringMatching(/^[0-9a-f]{32}_photo\.jpg$/) });
    expect(res.headers.get('location')).toBe(res.body.url);
    const got = await download(res.body.url);
    expect(got).toMatchObject({ status: 200, type: 'image/jpeg' });
    expect(got.bytes.equals(jpeg)).toBe(true);
    if (onPostgres) {
      // Files live in the app's schema: a record and the bytes in chunks.
      const url = server.platform.config.databaseUrl;
      expect(await pgQuery(`SELECT "contentType", size::int AS size FROM "app_${appId}"."_FILES" WHERE name = $1`, [res.body.name], url)).toEqual([{ contentType: 'image/jpeg', size: 7 }]);
      const chunks = await pgQuery(`SELECT n, bytes FROM "app_${appId}"."_FILE_CHUNKS" WHERE name = $1`, [res.body.name], url);
      expect(chunks.map((c) => [c.n, Buffer.compare(c.bytes as Buffer, jpeg)])).toEqual([[0, 0]]);
      expect(fs.existsSync(path.join(server.home, 'apps', appId, 'files', res.body.name))).toBe(false);
    } else {
      // Files live under apps/<appId>/files/, with the content type beside them.
      const folder = path.join(server.home, 'apps', appId, 'files');
      expect(fs.readFileSync(path.join(folder, res.body.name)).equals(jpeg)).toBe(true);
      expect(JSON.parse(fs.readFileSync(path.join(folder, '.meta', `${res.body.name}.json`), 'utf8'))).toMatchObject({ contentType: 'image/jpeg', size: 7 });
    }
  });

  it('takes JSON {base64} and appends the extension of a known content type to a bare name', async () => {
    const res = await call('POST', '/files/report', { master: true, body: { base64: 'data:application/pdf;base64,' + Buffer.from('%PDF-1.4').toString('base64') } });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/_report\.pdf$/);
    expect((await download(res.body.url)).type).toBe('application/pdf');
  });

  it.each([
    ['a leading dash', '-x.txt'],
    ['a dollar sign', 'a$b.txt'],
    ['a colon', 'a:b.txt'],
    ['a leading dot', '.hidden'],
  ])('refuses a name with %s (122)', async (_label, name) => {
    const res = await call('POST', `/files/${encodeURIComponent(name)}`, { master: true, raw: { data: Buffer.from('x'), type: 'application/octet-stream' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(122);
  });

  it('refuses names outside the rule before any file is written', async () => {
    expect(() => checkFileName(`${'a'.repeat(125)}.txt`)).toThrow(expect.objectContaining({ code: 122 }));
    expect(() => checkFileName('a/b')).toThrow(expect.objectContaining({ code: 122 }));
    const escape = await call('POST', '/files/..%2Fescape.txt', { master: true, raw: { data: Buffer.from('x'), type: 'application/octet-stream' } });
    expect(escape.status).toBeGreaterThanOrEqual(400);
    expect(fs.existsSync(path.join(server.home, 'apps', appId, 'escape.txt'))).toBe(false);
  });

  it('keeps spaces and other allowed characters in names', async () => {
    const res = await call('POST', `/files/${encodeURIComponent('my photo@2x ~v1.png')}`, { master: true, raw: { data: Buffer.from('png'), type: 'image/png' } });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/_my photo@2x ~v1\.png$/);
    expect(res.body.url).toBe(`${apiURL}/files/${appId}/${encodeURIComponent(res.body.name)}`);
    expect((await download(res.body.url)).bytes.toString()).toBe('png');
    expect((await call('DELETE', `/files/${encodeURIComponent(res.body.name)}`, { master: true })).status).toBe(200);
  });

  it('refuses HTML, empty files, bad base64 and oversized bodies', async () => {
    expect((await call('POST', '/files/page.html', { master: true, raw: { data: Buffer.from('<p>'), type: 'text/html' } })).body.code).toBe(130);
    expect((await call('POST', '/files/empty.bin', { master: true, raw: { data: Buffer.alloc(0), type: 'application/octet-stream' } })).body.code).toBe(130);
    expect((await call('POST', '/files/x.txt', { master: true, body: { base64: 'not*base64' } })).body.code).toBe(130);
    const big = await call('POST', '/files/big.bin', { master: true, raw: { data: Buffer.alloc(MAX_FILE_SIZE + 1), type: 'application/octet-stream' } });
    expect(big.status).toBe(413);
    expect([116, 129, 130]).toContain(big.body.code);
    // The store itself refuses more than 20 MiB by default with 129 and status 413, and leaves nothing.
    const folder = path.join(server.home, 'scratch-files');
    const store = new DiskFileStore(folder);
    await expect(store.save('big.bin', [Buffer.alloc(MAX_FILE_SIZE), Buffer.alloc(1)])).rejects.toMatchObject({ code: 129, httpStatus: 413 });
    expect(fs.readdirSync(path.join(folder, '.tmp'))).toEqual([]);
    expect(fs.readdirSync(folder).filter((n) => !n.startsWith('.'))).toEqual([]);
  });

  it('deletes with the master key only; unknown files answer 153 and downloads 404', async () => {
    const { body } = await call('POST', '/files/gone.csv', { master: true, raw: { data: Buffer.from('a,b'), type: 'text/csv; charset=utf-8' } });
    expect((await download(body.url)).type).toBe('text/csv; charset=utf-8');
    const refused = await call('DELETE', `/files/${body.name}`);
    expect(refused.status).toBe(403);
    expect((await download(body.url)).status).toBe(200);
    expect(await call('DELETE', `/files/${body.name}`, { master: true })).toMatchObject({ status: 200, body: {} });
    const after = await download(body.url);
    expect(after.status).toBe(404);
    expect(after.bytes.toString()).toBe('File not found.');
    expect(await call('DELETE', `/files/${body.name}`, { master: true })).toMatchObject({ status: 400, body: { code: 153 } });
  });

  it('never serves anything outside the files folder, nor for an unknown app', async () => {
    for (const name of ['..%2F..%2Fdata.db', '..%2Fdata.db', '.meta', '.tmp', '..', '%2E%2E%2Fdata.db', '%2E%2E']) {
      const got = await download(`${apiURL}/files/${appId}/${name}`);
      expect(got.status, name).not.toBe(200);
      expect(got.bytes.toString('latin1')).not.toContain('SQLite format');
    }
    expect((await download(`${apiURL}/files/${appId}/0123456789abcdef0123456789abcdef_none.txt`)).status).toBe(404);
    const unknownApp = await call('GET', '/files/noSuchApp/x.txt', { noKeys: true });
    expect(unknownApp).toMatchObject({ status: 403, body: { code: 119 } });
  });
});

describe('config, purge, serverInfo and health', () => {
  it('stores config parameters; client keys do not see masterKeyOnly ones', async () => {
    expect((await call('PUT', '/config', { body: { params: { a: 1 } } })).status).toBe(403);
    const when = { __type: 'Date', iso: '2026-01-02T03:04:05.000Z' };
    const put = await call('PUT', '/config', { master: true, body: { params: { welcome: 'hi', limit: 3, when, secret: 's3' }, masterKeyOnly: { secret: true } } });
    expect(put).toMatchObject({ status: 200, body: { result: true } });
    expect((await call('GET', '/config')).body).toEqual({ params: { welcome: 'hi', limit: 3, when } });
    expect((await call('GET', '/config', { master: true })).body).toEqual({
      params: { welcome: 'hi', limit: 3, when, secret: 's3' },
      masterKeyOnly: { welcome: false, limit: false, when: false, secret: true },
    });
    const config = await Parse.Config.get();
    expect(config.get('welcome')).toBe('hi');
    expect(config.get('when')).toEqual(new Date(when.iso));
    expect(config.get('secret')).toBeUndefined();

    const saved = await Parse.Config.save({ fromSdk: [1, 2] }, { fromSdk: true });
    expect(saved.get('fromSdk')).toEqual([1, 2]);
    expect((await call('GET', '/config')).body.params.fromSdk).toBeUndefined();
    await call('PUT', '/config', { master: true, body: { params: { limit: { __op: 'Delete' }, fromSdk: { __op: 'Delete' }, welcome: 'hello' } } });
    expect((await call('GET', '/config')).body.params).toEqual({ welcome: 'hello', when });
    expect((await call('PUT', '/config', { master: true, body: { nothing: 1 } })).body.code).toBe(107);
    expect((await call('PUT', '/config', { master: true, body: { params: { 'a.b': 1 } } })).body.code).toBe(105);
  });

  it('purges every object of a class with the master key and keeps the schema', async () => {
    for (const n of [1, 2, 3]) await call('POST', '/classes/Junk', { body: { n } });
    expect((await call('DELETE', '/purge/Junk')).status).toBe(403);
    expect(await call('DELETE', '/purge/Junk', { master: true })).toMatchObject({ status: 200, body: {} });
    expect((await call('GET', '/classes/Junk?count=1&limit=0')).body.count).toBe(0);
    expect((await call('GET', '/schemas/Junk', { master: true })).body.fields.n).toEqual({ type: 'Number' });
    // A class that does not exist has nothing to purge: 200, as Parse Server answers.
    expect(await call('DELETE', '/purge/NeverSeen', { master: true })).toMatchObject({ status: 200, body: {} });
  });

  it('answers serverInfo with the credential headers, and health without any', async () => {
    const info = await call('GET', '/serverInfo');
    expect(info.status).toBe(200);
    // Parse Dashboard reads parseServerVersion as a semver: the Parse Server release the API follows.
    expect(info.body.parseServerVersion).toBe('9.10.0');
    expect(info.body.backyardVersion).toBe(packageVersion());
    expect(info.body.features.globalConfig).toEqual({ create: true, read: true, update: true, delete: true });
    expect(info.body.features.schemas.clearAllDataFromClass).toBe(true);
    expect(await call('GET', '/health', { noKeys: true })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await call('GET', '/serverInfo', { noKeys: true })).status).toBe(403);
  });
});

describe('aggregate', () => {
  const sales = [
    { region: 'north', item: 'apple', amount: 10, tags: ['fresh'] },
    { region: 'north', item: 'pear', amount: 25, tags: ['fresh', 'sale'] },
    { region: 'south', item: 'apple', amount: 5 },
    { region: 'south', item: 'plum', amount: 40, tags: ['sale'] },
    { region: 'east', item: 'apple', amount: 15 },
    { item: 'fig', amount: 7 },
  ];
  beforeAll(async () => {
    const res = await call('POST', '/batch', { body: { requests: sales.map((body) => ({ method: 'POST', path: '/data/classes/Sale', body })) } });
    expect(res.status).toBe(200);
  });
  const aggregate = (params: Record<string, unknown>, master = true) =>
    call('GET', `/aggregate/Sale?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}`, { master });

  it('answers distinct values, with and without where, and needs the master key', async () => {
    expect((await aggregate({ distinct: 'region' })).body.results.sort()).toEqual(['east', 'north', 'south']);
    expect((await aggregate({ distinct: 'item', where: { amount: { $gte: 10 } } })).body.results.sort()).toEqual(['apple', 'pear', 'plum']);
    expect((await aggregate({ distinct: 'tags' })).body.results.sort()).toEqual(['fresh', 'sale']);
    expect((await aggregate({ distinct: 'region' }, false)).status).toBe(403);
    expect((await new Parse.Query('Sale').greaterThan('amount', 6).distinct('item')).sort()).toEqual(['apple', 'fig', 'pear', 'plum']);
  });

  it('runs $match, $group, $sort and $project as computed by hand', async () => {
    const pipeline = [
      { $match: { amount: { $gte: 7 } } },
      { $group: { _id: '$region', total: { $sum: '$amount' }, n: { $sum: 1 }, avg: { $avg: '$amount' }, low: { $min: '$amount' }, high: { $max: '$amount' }, items: { $push: '$item' }, kinds: { $addToSet: '$item' } } },
      { $sort: { total: -1 } },
    ];
    const { status, body } = await aggregate({ pipeline });
    expect(status).toBe(200);
    // Without a $sort before $group, $push and $addToSet follow the natural order, which is unspecified.
    const sortLists = (rows: any[]) => rows.map((r) => ({ ...r, items: [...r.items].sort(), kinds: [...r.kinds].sort() }));
    expect(sortLists(body.results)).toEqual([
      { objectId: 'south', total: 40, n: 1, avg: 40, low: 40, high: 40, items: ['plum'], kinds: ['plum'] },
      { objectId: 'north', total: 35, n: 2, avg: 17.5, low: 10, high: 25, items: ['apple', 'pear'], kinds: ['apple', 'pear'] },
      { objectId: 'east', total: 15, n: 1, avg: 15, low: 15, high: 15, items: ['apple'], kinds: ['apple'] },
      { objectId: null, total: 7, n: 1, avg: 7, low: 7, high: 7, items: ['fig'], kinds: ['fig'] },
    ]);
    // The same pipeline in mingo (Mongo semantics in JavaScript), with _id renamed as Parse does.
    const oracle = mingoAggregate(sales, pipeline).map(({ _id, ...rest }: any) => ({ objectId: _id ?? null, ...rest }));
    expect(sortLists(body.results)).toEqual(sortLists(oracle));

    const projected = await aggregate({ pipeline: [{ $sort: { amount: 1 } }, { $skip: 1 }, { $limit: 2 }, { $project: { _id: 0, item: 1, money: '$amount' } }] });
    expect(projected.body.results).toEqual([{ item: 'fig', money: 7 }, { item: 'apple', money: 10 }]);
    const later = await aggregate({ pipeline: [{ $group: { _id: '$item', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }, { $project: { n: 1 } }] });
    expect(later.body.results).toEqual([{ objectId: 'apple', n: 3 }]);
    // A skip or limit past what the database holds is none or every row, never a 500.
    const skipped = await aggregate({ pipeline: [{ $sort: { amount: 1 } }, { $skip: 1e300 }, { $skip: 9007199254740991 }, { $limit: 5 }] });
    expect([skipped.status, skipped.body.results]).toEqual([200, []]);
    const limited = await aggregate({ pipeline: [{ $match: { region: 'north' } }, { $limit: 1e300 }, { $project: { _id: 0, item: 1 } }] });
    expect([limited.status, limited.body.results.length]).toEqual([200, 2]);
  });

  it('counts, groups everything under null and takes the SDK\'s pipeline in its body', async () => {
    expect((await aggregate({ pipeline: [{ $match: { region: 'north' } }, { $count: 'howMany' }] })).body.results).toEqual([{ howMany: 2 }]);
    expect((await aggregate({ pipeline: [{ $match: { region: 'west' } }, { $count: 'howMany' }] })).body.results).toEqual([]);
    const all = await new Parse.Query('Sale').aggregate([{ $sort: { amount: -1 } }, { $group: { _id: null, total: { $sum: '$amount' }, first: { $first: '$item' }, last: { $last: '$item' } } }]);
    expect(all).toEqual([{ objectId: null, total: 102, first: 'plum', last: 'apple' }]);
    const query = new Parse.Query('Sale').equalTo('item', 'apple');
    expect(await query.aggregate([{ $group: { _id: '$item', n: { $sum: 1 } } }])).toEqual([{ objectId: 'apple', n: 3 }]);
  });

  it.each([
    ['an unknown stage', { pipeline: [{ $lookup: {} }] }],
    ['an unknown accumulator', { pipeline: [{ $group: { _id: null, x: { $median: '$amount' } } }] }],
    ['a group without _id', { pipeline: [{ $group: { total: { $sum: 1 } } }] }],
    ['a stage with two keys', { pipeline: [{ $limit: 1, $skip: 1 }] }],
    ['an unknown where operator', { pipeline: [{ $match: { amount: { $near: 3 } } }] }],
    ['an unknown parameter', { distinct: 'item', group: 'x' }],
  ])('refuses %s with 102', async (_label, params) => {
    const res = await aggregate(params);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(102);
  });
});

describe('the per-app OpenAPI document', () => {
  it('validates as OpenAPI 3.1, documents each class and changes with the schema', async () => {
    expect((await call('GET', '/openapi.json', { noKeys: true })).status).toBe(403);
    const first = (await call('GET', '/openapi.json')).body;
    const validator = new Validator();
    const result = await validator.validate(first);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(validator.version).toBe('3.1');
    expect(first.servers[0].url).toBe(apiURL);
    expect(Object.keys(first.paths['/classes/Sale'])).toEqual(['get', 'post']);
    expect(Object.keys(first.paths['/classes/Sale/{objectId}']).filter((k) => k !== 'parameters')).toEqual(['get', 'put', 'delete']);
    expect(first.paths['/users'].post).toBeDefined();
    expect(first.paths['/login'].post).toBeDefined();
    expect(first.paths['/batch'].post).toBeDefined();
    expect(first.paths['/schemas'].get.security).toEqual([{ applicationId: [], masterKey: [] }]);
    expect(first.components.schemas.Sale.properties.amount).toEqual({ type: 'number' });
    expect(first.components.schemas.Doc.properties.attachment).toEqual({ $ref: '#/components/schemas/Parse.File' });
    expect(first.components.securitySchemes.applicationId).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Backend-Application-Id' });
    expect(first.components.securitySchemes.restApiKey.name).toBe('X-Backend-REST-API-Key');
    expect(first.paths[`/files/${appId}/{name}`].get.security).toEqual([]);
    expect(first.paths[`/files/${appId}/metadata/{name}`].get.security).toEqual([]);
    expect(first.paths['/classes/Gadget']).toBeUndefined();
    const ids = Object.values(first.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId).filter(Boolean));
    expect(new Set(ids).size).toBe(ids.length);

    const owner = (await call('POST', '/classes/Owner', { body: { name: 'o' } })).body.objectId;
    await call('POST', '/classes/Gadget', { body: { label: 'g', madeAt: { __type: 'Date', iso: '2026-03-04T05:06:07.000Z' }, owner: { __type: 'Pointer', className: 'Owner', objectId: owner } } });
    const second = (await call('GET', '/openapi.json')).body;
    expect((await new Validator().validate(second)).valid).toBe(true);
    expect(Object.keys(second.paths['/classes/Gadget'])).toEqual(['get', 'post']);
    expect(second.components.schemas.Gadget.properties).toMatchObject({
      label: { type: 'string' },
      madeAt: { $ref: '#/components/schemas/Parse.Date' },
      owner: { $ref: '#/components/schemas/Parse.Pointer', properties: { className: { const: 'Owner' } } },
    });
  });
});

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILE_CHUNK_SIZE } from '../src/data/storage/postgres/files.js';
import { parseByteRange } from '../src/data/rest/byteRange.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

/**
 * Uploads streamed into the app's file store and downloads streamed out of it, with Range
 * requests, the maxUploadSize setting, and uploads cut off midway: on disk (SQLite homes) and in
 * PostgreSQL (the vitest.postgres.config.ts run).
 */

let server: TestServer;
let app: TestApp;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server);
});
afterAll(async () => server?.close());

const headersOf = (master = true): Record<string, string> => ({
  'X-Parse-Application-Id': app.appId,
  ...(master ? { 'X-Parse-Master-Key': app.keys.masterKey } : { 'X-Parse-REST-API-Key': app.keys.restKey }),
});

/** Uploads `data` raw with the master key. */
async function upload(name: string, data: Uint8Array, type = 'application/octet-stream') {
  const response = await fetch(`${app.apiURL}/files/${name}`, { method: 'POST', headers: { ...headersOf(), 'content-type': type }, body: data });
  return { status: response.status, body: (await response.json()) as any };
}

const get = async (url: string, headers: Record<string, string> = {}, method = 'GET') => {
  const response = await fetch(url, { method, headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
};

/** Polls `check` until it holds, for at most 20 s. */
async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const filesFolder = () => path.join(server.home, 'apps', app.appId, 'files');
const dbUrl = () => server.platform.config.databaseUrl;
/** Stored files and chunks of the app, counted where its store keeps them. */
async function storedCounts(): Promise<{ files: number; chunks: number; tmp: number }> {
  if (onPostgres) {
    const [row] = await pgQuery(
      `SELECT (SELECT count(*)::int FROM "app_${app.appId}"."_FILES") AS files, (SELECT count(*)::int FROM "app_${app.appId}"."_FILE_CHUNKS") AS chunks`,
      [],
      dbUrl(),
    );
    return { files: row!.files as number, chunks: row!.chunks as number, tmp: 0 };
  }
  const list = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => !n.startsWith('.')) : []);
  return { files: list(filesFolder()).length, chunks: list(path.join(filesFolder(), '.meta')).length, tmp: list(path.join(filesFolder(), '.tmp')).length };
}

describe('byte ranges (parseByteRange)', () => {
  it('answers the bytes a single range asks of a file, clamped to its end', () => {
    expect(parseByteRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseByteRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseByteRange('bytes=-5', 100)).toEqual({ start: 95, end: 99 });
    expect(parseByteRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(parseByteRange('bytes=50-5000', 100)).toEqual({ start: 50, end: 99 });
    expect(parseByteRange('Bytes = 1 - 2', 100)).toEqual({ start: 1, end: 2 });
    expect(parseByteRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseByteRange('bytes=-0', 100)).toBe('unsatisfiable');
    for (const ignored of [undefined, '', 'bytes=5-1', 'bytes=0-1,5-6', 'items=0-1', 'bytes=a-b', 'bytes=-', 'bytes=1.5-2']) {
      expect(parseByteRange(ignored, 100), String(ignored)).toBeUndefined();
    }
  });

  it('never answers a range outside the file, whatever the header', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.oneof(fc.string(), fc.tuple(fc.nat(20_000), fc.option(fc.nat(20_000))).map(([a, b]) => `bytes=${a}-${b ?? ''}`), fc.nat(20_000).map((n) => `bytes=-${n}`)), (size, header) => {
        const range = parseByteRange(header, size);
        if (range === undefined || range === 'unsatisfiable') return;
        expect(range.start).toBeGreaterThanOrEqual(0);
        expect(range.start).toBeLessThanOrEqual(range.end);
        expect(range.end).toBeLessThan(size);
      }),
    );
  });

  it('answers first-last exactly as asked when it lies inside the file', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.nat(), fc.nat(), (size, a, b) => {
        const [start, end] = [a % size, b % size].sort((x, y) => x - y) as [number, number];
        expect(parseByteRange(`bytes=${start}-${end}`, size)).toEqual({ start, end });
      }),
    );
  });
});

describe('Range requests on downloads', () => {
  // More than two chunks of the PostgreSQL store, so that ranges cross chunk boundaries.
  const data = randomBytes(2 * FILE_CHUNK_SIZE + 12_345);
  let url: string;
  beforeAll(async () => {
    const saved = await upload('video.mp4', data);
    expect(saved.status).toBe(201);
    url = saved.body.url;
  });

  it('serves the whole file with Accept-Ranges, and a range with 206 and Content-Range', async () => {
    const whole = await get(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(whole.headers.get('content-length')).toBe(String(data.length));
    expect(whole.bytes.equals(data)).toBe(true);
    const size = data.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-9', 0, 9],
      [`bytes=${FILE_CHUNK_SIZE - 3}-${FILE_CHUNK_SIZE + 2}`, FILE_CHUNK_SIZE - 3, FILE_CHUNK_SIZE + 2],
      [`bytes=${FILE_CHUNK_SIZE - 1}-${2 * FILE_CHUNK_SIZE}`, FILE_CHUNK_SIZE - 1, 2 * FILE_CHUNK_SIZE],
      ['bytes=-100', size - 100, size - 1],
      [`bytes=${size - 7}-`, size - 7, size - 1],
      [`bytes=5-${size * 10}`, 5, size - 1],
    ];
    for (const [header, start, end] of cases) {
      const part = await get(url, { range: header });
      expect(part.status, header).toBe(206);
      expect(part.headers.get('content-range'), header).toBe(`bytes ${start}-${end}/${size}`);
      expect(part.headers.get('content-length'), header).toBe(String(end - start + 1));
      expect(part.headers.get('content-type')).toBe('video/mp4');
      expect(part.headers.get('x-content-type-options')).toBe('nosniff');
      expect(part.bytes.equals(data.subarray(start, end + 1)), header).toBe(true);
    }
  });

  it('answers 416 with the size for a range past the end, and the whole file for several ranges or If-Range', async () => {
    const past = await get(url, { range: `bytes=${data.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${data.length}`);
    expect(past.bytes.toString()).toContain(`${data.length} bytes`);
    for (const headers of [{ range: 'bytes=0-1,5-6' }, { range: 'bytes=0-1', 'if-range': '"x"' }, { range: 'lines=1-2' }]) {
      const whole = await get(url, headers);
      expect(whole.status, JSON.stringify(headers)).toBe(200);
      expect(whole.bytes.equals(data)).toBe(true);
    }
    const head = await get(url, { range: 'bytes=10-19' }, 'HEAD');
    expect([head.status, head.headers.get('content-range'), head.headers.get('content-length'), head.bytes.length]).toEqual([206, `bytes 10-19/${data.length}`, '10', 0]);
    const missing = await get(`${app.apiURL}/files/${app.appId}/0123456789abcdef0123456789abcdef_none.mp4`, { range: 'bytes=0-1' });
    expect([missing.status, missing.bytes.toString()]).toEqual([404, 'File not found.']);
  });
});

describe('maxUploadSize', () => {
  it('refuses an upload above the app\'s limit with 129 (413), also without Content-Length, and stores nothing', async () => {
    await server.platform.services.backendApps.configure(app.appId, { maxUploadSize: '1mb' });
    try {
      const before = await storedCounts();
      const over = await upload('big.bin', Buffer.alloc(1024 * 1024 + 1));
      expect(over).toMatchObject({ status: 413, body: { code: 129 } });
      expect(over.body.error).toContain('1048576 bytes');
      // Chunked: the size is known only as the bytes arrive. On a connection of its own (node:http):
      // fetch's pool would reuse a connection whose request body it had not finished sending.
      const chunked = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const url = new URL(`${app.apiURL}/files/big.bin`);
        const request = http.request(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers: { ...headersOf(), 'content-type': 'application/octet-stream' } },
          (response) => {
            const parts: Buffer[] = [];
            response.on('data', (part: Buffer) => parts.push(part));
            response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(parts).toString()) }));
          },
        );
        request.on('error', reject);
        for (let i = 0; i < 5; i++) request.write(Buffer.alloc(300 * 1024, i));
        request.end();
      });
      expect(chunked).toMatchObject({ status: 413, body: { code: 129 } });
      expect(await storedCounts()).toEqual(before);
      expect((await upload('fits.bin', Buffer.alloc(1024 * 1024, 7))).status).toBe(201);
    } finally {
      await server.platform.services.backendApps.configure(app.appId, { maxUploadSize: null });
    }
  });

  it('is checked as a size in Parse Server\'s form', async () => {
    const refused = server.platform.services.backendApps.configure(app.appId, { maxUploadSize: '20 parsecs' });
    await expect(refused).rejects.toThrow(/maxUploadSize must be a size such as "20mb"/);
    await expect(server.platform.services.backendApps.configure(app.appId, { maxUploadSize: '11gb' })).rejects.toThrow(/maxUploadSize/);
  });
});

describe('an upload cut off midway', () => {
  it('leaves no file, and the next upload is stored', async () => {
    const before = await storedCounts();
    const total = 3 * FILE_CHUNK_SIZE;
    const url = new URL(`${app.apiURL}/files/cut.bin`);
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { ...headersOf(), 'content-type': 'application/octet-stream', 'content-length': total },
    });
    request.on('error', () => undefined);
    request.write(Buffer.alloc(2 * FILE_CHUNK_SIZE + 10, 1));
    // The store is writing it: a chunk inserted in the upload's transaction (PostgreSQL), bytes in .tmp (disk).
    if (onPostgres) {
      await until(
        async () =>
          (await pgQuery(`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = '_FILE_CHUNKS' AND l.mode = 'RowExclusiveLock'`, [], dbUrl()))[0]!.n !== 0,
        'the upload transaction',
      );
    } else {
      const tmp = path.join(filesFolder(), '.tmp');
      await until(() => fs.existsSync(tmp) && fs.readdirSync(tmp).some((n) => fs.statSync(path.join(tmp, n)).size > 0), 'bytes in .tmp');
    }
    request.destroy();
    if (onPostgres) {
      await until(
        async () => (await pgQuery(`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = '_FILE_CHUNKS'`, [], dbUrl()))[0]!.n === 0,
        'the upload transaction to end',
      );
    } else {
      await until(() => fs.readdirSync(path.join(filesFolder(), '.tmp')).length === 0, '.tmp to be emptied');
    }
    expect(await storedCounts()).toEqual(before);
    const next = await upload('after.bin', Buffer.alloc(10, 2));
    expect(next.status).toBe(201);
    expect((await get(next.body.url)).bytes.equals(Buffer.alloc(10, 2))).toBe(true);
  });
});

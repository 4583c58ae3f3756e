import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

const exec = promisify(execFile);

/**
 * Uploaded files on one PostgreSQL shared by two `backyard serve` processes that share nothing
 * else (a home each, as on two machines): a file uploaded through one is served, in whole or in
 * part, by the other, and deleted through either.
 */
describe.skipIf(!onPostgres)('files of two backyard serve processes with separate homes on one PostgreSQL', () => {
  const homes: string[] = [];
  const processes: ServeProcess[] = [];
  let app: { appId: string; masterKey: string };
  const database = `files_${Math.random().toString(36).slice(2, 10)}`;
  const databaseUrl = () => {
    const url = new URL(process.env.BACKYARD_TEST_DATABASE_URL!);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const envOf = (home: string) => () => stdioEnv(home, { BACKYARD_DATABASE_URL: databaseUrl(), BACKYARD_LOG_LEVEL: 'warn' });

  beforeAll(async () => {
    await pgQuery(`CREATE DATABASE ${database}`);
    homes.push(makeHome(), makeHome());
    const token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: envOf(homes[0]!)() })).stdout.trim();
    for (const home of homes) processes.push(new ServeProcess(await freePort(), token, envOf(home)));
    for (const p of processes) await p.start();
    const created = await fetch(`${processes[0]!.url}/v1/backend-apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'shared-files' }),
    });
    expect(created.status).toBe(201);
    const { appId } = (await created.json()) as { appId: string };
    // The keys through the second home: the app is known there only through the database.
    const keys = (await exec(process.execPath, [CLI, 'app', 'keys', appId], { env: envOf(homes[1]!)() })).stdout;
    app = { appId, masterKey: /^masterKey\t(.+)$/m.exec(keys)![1]! };
  }, 120_000);
  afterAll(async () => {
    for (const p of processes) if (p.running) await p.stop('SIGTERM');
    for (const home of homes) removeHome(home);
    await pgQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  const master = (base: string, method: string, name: string, body?: Buffer) =>
    fetch(`${base}/data/files/${name}`, {
      method,
      headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey, 'content-type': 'image/png' },
      body,
    });

  it('serves through B what was uploaded through A, ranges too, and a delete through B is seen by A', async () => {
    const [a, b] = processes as [ServeProcess, ServeProcess];
    const data = randomBytes(700 * 1024);
    const saved = await master(a.url, 'POST', 'picture.png', data);
    expect(saved.status).toBe(201);
    const { name } = (await saved.json()) as { name: string };
    // Nothing of it in either home.
    for (const home of homes) expect(fs.existsSync(path.join(home, 'apps', app.appId, 'files', name))).toBe(false);

    const whole = await fetch(`${b.url}/data/files/${app.appId}/${name}`);
    expect([whole.status, whole.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await whole.arrayBuffer()).equals(data)).toBe(true);
    const part = await fetch(`${b.url}/data/files/${app.appId}/${name}`, { headers: { range: 'bytes=262000-262999' } });
    expect([part.status, part.headers.get('content-range')]).toEqual([206, `bytes 262000-262999/${data.length}`]);
    expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(262000, 263000))).toBe(true);

    expect((await master(b.url, 'DELETE', name)).status).toBe(200);
    const gone = await fetch(`${a.url}/data/files/${app.appId}/${name}`);
    expect([gone.status, await gone.text()]).toEqual([404, 'File not found.']);
    expect(await pgQuery(`SELECT count(*)::int AS n FROM "app_${app.appId}"."_FILE_CHUNKS"`, [], databaseUrl())).toEqual([{ n: 0 }]);
  });
});

import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from './helpers/dataApp.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome, startTestServer, type TestServer } from './helpers/server.js';
import { onPostgres } from './helpers/storage.js';

const exec = promisify(execFile);

/**
 * BACKYARD_DATABASE_URL naming a PostgreSQL nobody answers at (a free port): `serve` refuses to
 * start and says why; a running server answers the data API with a Parse error 503, never a 500.
 */
describe('a PostgreSQL that cannot be reached', () => {
  let url: string;
  let server: TestServer;
  beforeAll(async () => {
    url = `postgres://postgres:secret-pw@127.0.0.1:${await freePort()}/nowhere`;
    server = await startTestServer({ BACKYARD_DATABASE_URL: url });
  });
  afterAll(() => server?.close());

  it('backyard serve refuses to start, naming the database without its password and what failed', async () => {
    const home = makeHome();
    try {
      const started = exec(process.execPath, [CLI, 'serve', '--port', String(await freePort())], { env: stdioEnv(home, { BACKYARD_DATABASE_URL: url }), timeout: 30_000 });
      const failure = (await started.then(
        () => undefined,
        (error: unknown) => error,
      )) as { code?: number; stderr?: string } | undefined;
      expect(failure?.code).not.toBe(0);
      expect(failure?.stderr).toContain(`PostgreSQL at ${url.replace(':secret-pw', '')} cannot be reached (`);
      expect(failure?.stderr).toContain('ECONNREFUSED');
      expect(failure?.stderr).not.toContain('secret-pw');
      expect(failure?.stderr).not.toMatch(/\n\s+at /);
    } finally {
      removeHome(home);
    }
  });

  it('the data API answers 503 with a Parse error that says so, call after call', async () => {
    const app = createTestApp(server);
    for (let i = 0; i < 2; i++) {
      const refused = await app.call('POST', '/classes/Note', { body: { text: 'x' } });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ code: 1, error: expect.stringMatching(/^The app's database \(PostgreSQL\) cannot be reached right now \(.*ECONNREFUSED.*\); try again later\.$/) });
    }
  });

  it.skipIf(!onPostgres)('serves once the database answers, without a restart', async () => {
    // A port that refuses connections, then forwards them to the run's PostgreSQL.
    const port = await freePort();
    const real = new URL(process.env.BACKYARD_TEST_DATABASE_URL!);
    const late = new URL(real);
    late.host = `127.0.0.1:${port}`;
    const lateServer = await startTestServer({ BACKYARD_DATABASE_URL: late.toString() });
    const forwarder = net.createServer((socket) => {
      const upstream = net.connect(Number(real.port), real.hostname);
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    try {
      const app = createTestApp(lateServer);
      expect((await app.call('POST', '/classes/Note', { body: { text: 'early' } })).status).toBe(503);
      await new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
      const created = await app.call('POST', '/classes/Note', { body: { text: 'late' } });
      expect(created.status).toBe(201);
      expect((await app.call('GET', `/classes/Note/${created.body.objectId}`)).body).toMatchObject({ text: 'late' });
    } finally {
      await lateServer.close();
      forwarder.close();
    }
  });
});

import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createTestApp } from './helpers/dataApp.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { freePort } from './helpers/serveProcess.js';
import { api, makeHome, postgresDatabase, removeHome, startTestServer } from './helpers/server.js';
import { onPostgres } from './helpers/storage.js';

const exec = promisify(execFile);

/**
 * BACKYARD_DATABASE_URL naming a PostgreSQL nobody answers at (a free port): `serve` refuses to
 * start and says why. A running server whose PostgreSQL goes away answers the data API with a Parse
 * error 503 and the management API with its "unavailable" text, never a stack trace, and serves
 * again once the database is back, without a restart.
 */
describe('a PostgreSQL that cannot be reached', () => {
  it('backyard serve refuses to start, naming the database without its password and what failed', async () => {
    const url = `postgres://postgres:secret-pw@127.0.0.1:${await freePort()}/nowhere`;
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

  it.skipIf(!onPostgres)('answers 503 (data API) and 500 "unavailable" (management API) while it is away, and serves again once it is back', async () => {
    // The server reaches its database through a forwarder that the test cuts and restores.
    const database = await postgresDatabase();
    const real = new URL(database.env.BACKYARD_DATABASE_URL!);
    const port = await freePort();
    const sockets = new Set<net.Socket>();
    const forwarder = net.createServer((socket) => {
      const upstream = net.connect(Number(real.port), real.hostname);
      sockets.add(socket).add(upstream);
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    const listen = () => new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
    const cut = async () => {
      await new Promise<void>((resolve) => {
        forwarder.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      });
    };
    await listen();
    const via = new URL(real);
    via.host = `127.0.0.1:${port}`;
    const server = await startTestServer({ BACKYARD_DATABASE_URL: via.toString() });
    try {
      const app = await createTestApp(server);
      expect((await app.call('POST', '/classes/Note', { body: { text: 'before' } })).status).toBe(201);

      await cut();
      for (let i = 0; i < 2; i++) {
        const refused = await app.call('POST', '/classes/Note', { body: { text: 'away' } });
        expect(refused.status).toBe(503);
        expect(refused.body).toEqual({ code: 1, error: expect.stringMatching(/\(PostgreSQL\) cannot be reached right now \(.+\); try again later\.$/) });
      }
      const listed = await api(server, 'GET', '/backend-apps', { token: server.alice });
      expect(listed.status).toBe(500);
      expect(listed.text).toMatch(/^Backyard's database \(PostgreSQL\) cannot be reached right now \(.+\); try again later\.$/);

      await listen();
      const created = await app.call('POST', '/classes/Note', { body: { text: 'after' } });
      expect(created.status).toBe(201);
      expect((await app.call('GET', `/classes/Note/${created.body.objectId}`)).body).toMatchObject({ text: 'after' });
      expect((await api(server, 'GET', '/backend-apps', { token: server.alice })).status).toBe(200);
    } finally {
      await server.close();
      await cut();
      await database.drop();
    }
  });
});

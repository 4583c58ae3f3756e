import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/log.js';
import { openPlatform, type Platform } from '../../src/platform/platform.js';
import { startBackyard } from '../../src/serve.js';
import type { HttpServer } from '../../src/server/http.js';
import { pgQuery } from './storage.js';

export interface TestServer {
  home: string;
  platform: Platform;
  http: HttpServer;
  /** `http://localhost:<port>` */
  url: string;
  /** Bearer tokens of two accounts, alice and bob. */
  alice: string;
  bob: string;
  close(): Promise<void>;
}

/**
 * On the PostgreSQL run (vitest.postgres.config.ts starts a cluster and names it in
 * BACKYARD_TEST_DATABASE_URL): a new database of that cluster for one server's platform state and
 * apps, as `BACKYARD_DATABASE_URL`, and how to drop it. Nothing for SQLite.
 */
export async function postgresDatabase(): Promise<{ env: NodeJS.ProcessEnv; drop: () => Promise<void> }> {
  if (!process.env.BACKYARD_TEST_DATABASE_URL) return { env: {}, drop: async () => undefined };
  const name = `server_${Math.random().toString(36).slice(2, 12)}`;
  await pgQuery(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.BACKYARD_TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return { env: { BACKYARD_DATABASE_URL: url.toString() }, drop: async () => void (await pgQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

/** A fresh temporary home. Removed by `removeHome`. */
export const makeHome = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-test-'));
export const removeHome = (home: string) => fs.rmSync(home, { recursive: true, force: true });

/**
 * Starts a real Backyard on an ephemeral loopback port with a temporary home and two accounts.
 * `close()` stops it and deletes the home. `log`: a logger of the test's own (to read what was
 * logged); by default, one at BACKYARD_LOG_LEVEL (silent unless `env` says otherwise).
 */
export async function startTestServer(env: NodeJS.ProcessEnv = {}, log?: Logger): Promise<TestServer> {
  const home = makeHome();
  const database = await postgresDatabase();
  const config = loadConfig({ home, port: 0, host: '127.0.0.1' }, { BACKYARD_LOG_LEVEL: 'silent', ...database.env, ...env });
  const platform = await openPlatform(config, log ?? createLogger(config.logLevel));
  const alice = (await platform.services.accounts.create('alice')).token;
  const bob = (await platform.services.accounts.create('bob')).token;
  const http = await startBackyard(platform, { port: 0, host: '127.0.0.1' });
  return {
    home,
    platform,
    http,
    url: http.url,
    alice,
    bob,
    close: async () => {
      await http.close();
      await platform.close();
      removeHome(home);
      await database.drop();
    },
  };
}

/** Calls the management API: `path` under `/v1`, JSON body, bearer token. */
export async function api(
  server: { url: string },
  method: string,
  pathAndQuery: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; contentType: string; text: string; json: () => unknown }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${server.url}/v1${pathAndQuery}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text,
    json: () => JSON.parse(text),
  };
}

/**
 * Signs `server`'s alice in to the dashboard with her token, as the sign-in form does.
 * @returns the session cookie (`name=value`) to send with dashboard requests.
 */
export async function dashboardCookie(server: Pick<TestServer, 'url' | 'alice'>): Promise<string> {
  const signIn = await fetch(`${server.url}/dashboard/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({ token: server.alice, next: '/dashboard' }).toString(),
    redirect: 'manual',
  });
  const cookie = signIn.headers.get('set-cookie');
  if (!cookie) throw new Error(`the dashboard refused the sign-in (${signIn.status})`);
  return cookie.split(';')[0]!;
}

/**
 * Cloud code as Parse and Back4App apps write it: npm packages named in `cloud/package.json`,
 * installed on deploy from the real npm registry (scripts off, cached by manifest and lock file,
 * refused with npm's reason while the old code keeps running), and Node's `http`/`https` clients
 * leaving the bubblewrap sandbox through the same egress proxy as `fetch`, under its rules.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';

const exec = promisify(execFile);

type Change = { path: string; operation: 'write' | 'delete'; writeMode?: 'overwrite' | 'append'; data?: string };
const write = (p: string, data: string): Change => ({ path: p, operation: 'write', writeMode: 'overwrite', data });

const MAIN = `
const isNumber = require('is-number');
const http = require('http');
const https = require('https');
Parse.Cloud.define('isNumber', (req) => [isNumber(req.params.value), isNumber('abc')]);
Parse.Cloud.define('version', () => 'v1');
const get = (client, url, options = {}) => new Promise((resolve) => {
  const request = client.get(url, options, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => (body += chunk));
    res.on('end', () => resolve('ok ' + res.statusCode + ' ' + body));
  });
  request.on('error', (e) => resolve('error ' + e.message));
});
Parse.Cloud.define('httpGet', (req) => get(http, req.params.url));
Parse.Cloud.define('httpsGet', (req) => get(https, req.params.url, { ca: req.params.ca }));
Parse.Cloud.define('fetch', async (req) => {
  try { const r = await fetch(req.params.url); return 'ok ' + r.status + ' ' + (await r.text()); } catch (e) { return 'error ' + (e.cause?.message || e.message); }
});
Parse.Cloud.define('ownApi', () => new Promise((resolve) => {
  const request = http.request(Parse.serverURL + '/classes/Thing', { headers: { 'X-Parse-Application-Id': Parse.applicationId, 'X-Parse-Master-Key': Parse.masterKey } }, (res) => {
    let body = '';
    res.on('data', (c) => (body += c));
    res.on('end', () => resolve(res.statusCode + ' ' + body));
  });
  request.on('error', (e) => resolve('error ' + e.message));
  request.end();
}));
`;

/** A loopback server answering `probe` (over TLS when given a key and certificate). */
async function probeServer(tls?: { key: string; cert: string }): Promise<{ port: number; close(): Promise<void> }> {
  const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('probe');
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('cloud code dependencies and http/https clients, in the sandbox', () => {
  let server: TestServer;
  let app: TestApp;
  let allowed: Awaited<ReturnType<typeof probeServer>>;
  let allowedTls: Awaited<ReturnType<typeof probeServer>>;
  let forbidden: Awaited<ReturnType<typeof probeServer>>;
  let certificate: string;
  let certFolder: string;
  const deploy = (changes: Change[]) => api(server, 'POST', `/backend-apps/${app.appId}/cloud-code`, { token: server.alice, body: { changes } });
  const run = async (fn: string, params: Record<string, unknown> = {}) => (await app.call('POST', `/functions/${fn}`, { body: params })).body as { result?: any; code?: number; error?: string };
  const modules = () => path.join(server.home, 'apps', app.appId, 'cloud', 'cloud', 'node_modules');
  const marker = () => JSON.parse(fs.readFileSync(path.join(modules(), '.backyard-dependencies.json'), 'utf8')) as { hash: string; installedAt: string; command: string };

  beforeAll(async () => {
    certFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-cert-'));
    const key = path.join(certFolder, 'key.pem');
    const cert = path.join(certFolder, 'cert.pem');
    await exec('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
    certificate = fs.readFileSync(cert, 'utf8');
    allowed = await probeServer();
    allowedTls = await probeServer({ key: fs.readFileSync(key, 'utf8'), cert: certificate });
    forbidden = await probeServer();
    server = await startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'sandbox', BACKYARD_CLOUD_ALLOW_HOSTS: `127.0.0.1:${allowed.port},127.0.0.1:${allowedTls.port}` });
    app = await createTestApp(server, 'packages');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([allowed?.close(), allowedTls?.close(), forbidden?.close()]);
    fs.rmSync(certFolder, { recursive: true, force: true });
  });

  it('installs the packages cloud/package.json names, and the code requires them in the sandbox', async () => {
    const res = await deploy([write('cloud/package.json', JSON.stringify({ dependencies: { 'is-number': '7.0.0' } })), write('cloud/main.js', MAIN)]);
    expect(res.text).toContain('installed 1 dependency of cloud/package.json into cloud/node_modules/ (npm install)');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ warnings: [] });
    expect(await run('isNumber', { value: '42' })).toEqual({ result: [true, false] });
    expect(marker().command).toBe('npm install');
    // The installed folder is Backyard's: not listed with the app's files, and no deploy writes into it.
    const listing = await api(server, 'GET', `/backend-apps/${app.appId}/cloud-code`, { token: server.alice });
    expect(listing.text).toContain('=== cloud/package.json');
    expect(listing.text).not.toContain('node_modules');
    const into = await deploy([write('cloud/node_modules/is-number/index.js', 'module.exports = () => "mine";')]);
    expect(into.status).toBe(403);
    expect(into.text).toMatch(/changes\[0\] \(cloud\/node_modules\/is-number\/index\.js\) lies in cloud\/node_modules\/, where Backyard installs the packages named in cloud\/package\.json/);
  }, 180_000);

  it('installs with npm ci from a deployed lock file, and a deploy with the same lock file does not run npm again', async () => {
    // The lock entry npm itself recorded for is-number@7.0.0 (its hidden lock file), as a project lock file.
    const hidden = JSON.parse(fs.readFileSync(path.join(modules(), '.package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const lock = JSON.stringify({
      name: 'packages',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'packages', dependencies: { 'is-number': '7.0.0' } }, 'node_modules/is-number': hidden.packages['node_modules/is-number'] },
    }, null, 2);
    const packageJson = JSON.stringify({ name: 'packages', dependencies: { 'is-number': '7.0.0' } });
    const first = await deploy([write('cloud/package.json', packageJson), write('cloud/package-lock.json', lock)]);
    expect(first.text).toContain('installed 1 dependency of cloud/package.json into cloud/node_modules/ (npm ci with cloud/package-lock.json)');
    expect(first.status).toBe(200);
    const installed = marker();
    expect(installed.command).toBe('npm ci');
    const inode = fs.statSync(modules()).ino;

    const again = await deploy([write('cloud/package-lock.json', lock), write('cloud/main.js', MAIN.replace("'v1'", "'v2'"))]);
    expect(again.status).toBe(200);
    expect(again.text).toContain('dependencies unchanged (same cloud/package-lock.json): kept cloud/node_modules/ without running npm');
    expect(marker()).toEqual(installed);
    expect(fs.statSync(modules()).ino).toBe(inode);
    expect(await run('version')).toEqual({ result: 'v2' });
    expect(await run('isNumber', { value: 7 })).toEqual({ result: [true, false] });
  }, 180_000);

  it('refuses a deploy naming a package that does not exist, with npm\'s reason, and the previous code keeps answering', async () => {
    const before = fs.readFileSync(path.join(server.home, 'apps', app.appId, 'cloud', 'cloud', 'package.json'), 'utf8');
    const installed = marker();
    const res = await deploy([
      write('cloud/package.json', JSON.stringify({ dependencies: { 'is-number': '7.0.0', 'backyard-no-such-package-xyz': '^1.0.0' } })),
      write('cloud/main.js', MAIN.replace("'v1'", "'v3'")),
      { path: 'cloud/package-lock.json', operation: 'delete' },
    ]);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^npm could not install the dependencies of cloud\/package\.json: /);
    expect(res.text).toMatch(/backyard-no-such-package-xyz/);
    expect(res.text).toMatch(/404/);
    expect(res.text).toContain('Nothing was changed: the previous cloud code and its packages keep running.');
    expect(res.text).not.toContain(server.home);
    expect(await run('version')).toEqual({ result: 'v2' });
    expect(await run('isNumber', { value: '1' })).toEqual({ result: [true, false] });
    expect(fs.readFileSync(path.join(server.home, 'apps', app.appId, 'cloud', 'cloud', 'package.json'), 'utf8')).toBe(before);
    expect(marker()).toEqual(installed);
    expect(fs.readdirSync(path.join(server.home, 'apps', app.appId)).filter((n) => n.startsWith('.cloud-deps-'))).toEqual([]);
  }, 180_000);

  it('puts the previous packages back when the deploy\'s files cannot be written after the install', async () => {
    const installed = marker();
    server.platform.services.cloudCode.applyStepHook = () => {
      throw new Error('simulated disk failure');
    };
    try {
      const res = await deploy([write('cloud/package.json', JSON.stringify({ dependencies: { 'is-number': '6.0.0' } })), write('cloud/main.js', MAIN.replace("'v1'", "'v4'")), { path: 'cloud/package-lock.json', operation: 'delete' }]);
      expect(res.status).toBe(500);
    } finally {
      server.platform.services.cloudCode.applyStepHook = undefined;
    }
    expect(marker()).toEqual(installed);
    expect(JSON.parse(fs.readFileSync(path.join(modules(), 'is-number', 'package.json'), 'utf8')).version).toBe('7.0.0');
    expect(fs.readdirSync(path.join(server.home, 'apps', app.appId)).filter((n) => n.startsWith('.cloud-deps-'))).toEqual([]);
    expect(await run('version')).toEqual({ result: 'v2' });
  }, 180_000);

  it('refuses dependencies from outside the registry before running npm', async () => {
    const local = await deploy([write('cloud/package.json', JSON.stringify({ dependencies: { secrets: 'file:/etc' } }))]);
    expect(local.status).toBe(400);
    expect(local.text).toMatch(/cloud\/package\.json dependencies\["secrets"\] is "file:\/etc": cloud code installs packages from the npm registry only/);
    const lock = await deploy([
      write('cloud/package-lock.json', JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/is-number': { version: '7.0.0', resolved: 'http://10.0.0.1/is-number.tgz' } } })),
    ]);
    expect(lock.status).toBe(400);
    expect(lock.text).toMatch(/cloud\/package-lock\.json resolves "node_modules\/is-number" to http:\/\/10\.0\.0\.1\/is-number\.tgz, which is not on the npm registry this server uses/);
    const broken = await deploy([write('cloud/package.json', '{"dependencies": ')]);
    expect(broken.status).toBe(400);
    expect(broken.text).toMatch(/^cloud\/package\.json is not valid JSON/);
    expect(await run('version')).toEqual({ result: 'v2' });
  });

  it('http.get and https.get reach an address the operator allows through the egress proxy, like fetch', async () => {
    expect((await run('fetch', { url: `http://127.0.0.1:${allowed.port}/` })).result).toBe('ok 200 probe');
    expect((await run('httpGet', { url: `http://127.0.0.1:${allowed.port}/` })).result).toBe('ok 200 probe');
    // TLS runs inside the tunnel, with the request's own options (here the test's certificate authority).
    expect((await run('httpsGet', { url: `https://127.0.0.1:${allowedTls.port}/`, ca: certificate })).result).toBe('ok 200 probe');
    expect((await run('httpsGet', { url: `https://127.0.0.1:${allowedTls.port}/` })).result).toMatch(/^error .*self-signed certificate/);
  });

  it('http.get and https.get are refused for loopback and private addresses, with the reason fetch gets', async () => {
    const viaFetch = (await run('fetch', { url: `http://127.0.0.1:${forbidden.port}/` })).result as string;
    expect(viaFetch).toMatch(/^error Backyard refused the connection to 127\.0\.0\.1:\d+: 127\.0\.0\.1 is not a public internet address/);
    expect((await run('httpGet', { url: `http://127.0.0.1:${forbidden.port}/` })).result).toBe(viaFetch);
    expect((await run('httpsGet', { url: `https://127.0.0.1:${forbidden.port}/` })).result).toBe(viaFetch);
    expect((await run('httpGet', { url: 'http://10.1.2.3/' })).result).toMatch(/^error Backyard refused the connection to 10\.1\.2\.3:80: 10\.1\.2\.3 is not a public internet address/);
    expect((await run('httpsGet', { url: 'https://[::ffff:127.0.0.1]/' })).result).toMatch(/^error Backyard refused .*not a public internet address/);
  });

  it('http.request reaches the app\'s own data API, as fetch does', async () => {
    await app.call('POST', '/classes/Thing', { body: { n: 1 } });
    const answer = (await run('ownApi')).result as string;
    expect(answer).toMatch(/^200 /);
    expect(JSON.parse(answer.slice(4))).toMatchObject({ results: [{ n: 1 }] });
  });
});

describe('cloud code dependencies under Node\'s permission model alone (no sandbox)', () => {
  let server: TestServer;
  let app: TestApp;

  beforeAll(async () => {
    server = await startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'none' });
    app = await createTestApp(server, 'unconfined');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('requires an installed package, and a deploy that removes the dependencies removes the folder', async () => {
    const deploy = (changes: Change[]) => api(server, 'POST', `/backend-apps/${app.appId}/cloud-code`, { token: server.alice, body: { changes } });
    const res = await deploy([write('cloud/package.json', '{"dependencies": {"is-number": "^7.0.0"}}'), write('cloud/main.js', MAIN)]);
    expect(res.text).toContain('installed 1 dependency');
    expect(res.status).toBe(200);
    expect((await app.call('POST', '/functions/isNumber', { body: { value: 3 } })).body).toEqual({ result: [true, false] });

    const modules = path.join(server.home, 'apps', app.appId, 'cloud', 'cloud', 'node_modules');
    const removed = await deploy([write('cloud/package.json', '{"name": "no-packages"}'), write('cloud/main.js', "Parse.Cloud.define('version', () => 'plain');")]);
    expect(removed.status).toBe(200);
    expect(removed.text).toContain('removed cloud/node_modules/: cloud/package.json names no dependencies any more');
    expect(fs.existsSync(modules)).toBe(false);
    expect((await app.call('POST', '/functions/version', { body: {} })).body).toEqual({ result: 'plain' });
  }, 180_000);

  it('a rollback to a version with dependencies installs them again, as a deploy does', async () => {
    // Follows the test above: the newest version names no dependencies, the one before it is-number.
    const versions = await api(server, 'GET', `/backend-apps/${app.appId}/cloud-code/versions`, { token: server.alice });
    const withPackage = (versions.json() as { versions: Array<{ version: number; changes: string }> }).versions[1];
    expect(withPackage?.changes, versions.text).toMatch(/^wrote cloud\/package\.json \(overwrite, 41 bytes/);
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/cloud-code/rollback`, { token: server.alice, body: { version: withPackage!.version } });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain('installed 1 dependency');
    expect(fs.existsSync(path.join(server.home, 'apps', app.appId, 'cloud', 'cloud', 'node_modules', 'is-number', 'package.json'))).toBe(true);
    expect((await app.call('POST', '/functions/isNumber', { body: { value: 3 } })).body).toEqual({ result: [true, false] });
  }, 180_000);
});

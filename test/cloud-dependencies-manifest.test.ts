/**
 * The parts of cloud code dependencies that need no server: reading `cloud/package.json` and the lock
 * file (dependencies.ts, with fast-check properties), and running npm (npm.ts) with its environment,
 * its time limit and npm's own reason, against the real npm and a loopback registry.
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagementError } from '../src/errors.js';
import { dependencyManifest } from '../src/platform/backendapps/cloudCode/dependencies.js';
import { npmEnvironment, NpmFailure, runNpm } from '../src/platform/backendapps/cloudCode/npm.js';

const REGISTRY = 'https://registry.npmjs.org/';
const manifestOf = (files: Record<string, string>) => dependencyManifest((p) => files[p], async () => REGISTRY);
const refusal = async (files: Record<string, string>): Promise<string> => {
  try {
    await manifestOf(files);
  } catch (error) {
    expect(error).toBeInstanceOf(ManagementError);
    expect((error as ManagementError).kind).toBe('invalid');
    return (error as Error).message;
  }
  throw new Error('accepted');
};

const name = fc.stringMatching(/^(@[a-z0-9][a-z0-9-]{0,8}\/)?[a-z0-9][a-z0-9._-]{0,12}$/);
const registrySpec = fc.oneof(
  fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)).map(([a, b, c]) => `${a}.${b}.${c}`),
  fc.tuple(fc.constantFrom('^', '~', '>=', ''), fc.nat(9)).map(([op, v]) => `${op}${v}.x`),
  fc.constantFrom('latest', 'next', '*', '', '>=1.0.0 <3', '1 || 2'),
);

describe('dependencyManifest (cloud/package.json and its lock file)', () => {
  it('installs nothing without package.json, or with no dependencies', async () => {
    expect(await manifestOf({})).toBeUndefined();
    expect(await manifestOf({ 'cloud/package.json': '{"name": "x", "scripts": {"postinstall": "rm -rf /"}}' })).toBeUndefined();
    expect(await manifestOf({ 'cloud/package.json': '{"dependencies": {}, "devDependencies": {"vitest": "^4"}}' })).toBeUndefined();
  });

  it('accepts registry versions, ranges and tags, keeps only name, version and dependency fields, and hashes the same manifest the same however it is written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(name, registrySpec, { minKeys: 1, maxKeys: 5 }), fc.nat(4), async (dependencies, indent) => {
        const a = await manifestOf({ 'cloud/package.json': JSON.stringify({ name: 'app', dependencies, scripts: { install: 'evil' }, workspaces: ['../..'] }) });
        const b = await manifestOf({ 'cloud/package.json': JSON.stringify({ workspaces: ['x'], dependencies, name: 'app' }, null, indent) });
        expect(a).toBeDefined();
        expect(a!.count).toBe(Object.keys(dependencies).length);
        expect(JSON.parse(a!.packageJson)).toEqual({ name: 'app', dependencies });
        expect(a!.hash).toBe(b!.hash);
        expect(a!.lock).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  it('hashes a different lock file, or a different version, differently', async () => {
    const base = { 'cloud/package.json': '{"dependencies": {"is-number": "7.0.0"}}' };
    const plain = await manifestOf(base);
    const locked = await manifestOf({ ...base, 'cloud/package-lock.json': '{"lockfileVersion": 3, "packages": {}}' });
    const relocked = await manifestOf({ ...base, 'cloud/package-lock.json': '{"lockfileVersion": 3, "packages": {"": {}}}' });
    const other = await manifestOf({ 'cloud/package.json': '{"dependencies": {"is-number": "7.0.1"}}' });
    expect(new Set([plain!.hash, locked!.hash, relocked!.hash, other!.hash]).size).toBe(4);
    expect(locked!.lock).toEqual({ treePath: 'cloud/package-lock.json', text: '{"lockfileVersion": 3, "packages": {}}' });
  });

  it('refuses every specifier that is not from the registry, naming the field and the package', async () => {
    const outside = fc.oneof(
      fc.constantFrom('file:/etc', 'file:../../other', 'link:../x', 'git+ssh://git@github.com/a/b.git', 'github:a/b', 'a/b', 'https://10.0.0.1/x.tgz', 'http://example.com/x.tgz', 'npm:../x', 'workspace:*'),
      fc.tuple(fc.constantFrom('file:', 'git://', 'http://', 'https://', 'link:'), fc.string({ maxLength: 20 })).map(([a, b]) => a + b),
    );
    await fc.assert(
      fc.asyncProperty(name, outside, fc.constantFrom('dependencies', 'optionalDependencies', 'devDependencies', 'peerDependencies'), async (pkg, spec, field) => {
        const message = await refusal({ 'cloud/package.json': JSON.stringify({ [field]: { [pkg]: spec } }) });
        expect(message).toContain(`cloud/package.json ${field}["${pkg}"] is "`);
        expect(message).toContain('cloud code installs packages from the npm registry only');
      }),
      { numRuns: 60 },
    );
  });

  it('refuses bad package.json files and names with a message naming what is wrong', async () => {
    expect(await refusal({ 'cloud/package.json': '{"dependencies": ' })).toMatch(/^cloud\/package\.json is not valid JSON \(/);
    expect(await refusal({ 'cloud/package.json': '[]' })).toMatch(/^cloud\/package\.json must hold a JSON object/);
    expect(await refusal({ 'cloud/package.json': '{"dependencies": ["is-number"]}' })).toMatch(/^cloud\/package\.json dependencies must be an object/);
    expect(await refusal({ 'cloud/package.json': '{"dependencies": {"Is_Number!": "1"}}' })).toMatch(/names "Is_Number!", which is not an npm package name/);
    expect(await refusal({ 'cloud/package.json': '{"dependencies": {"is-number": 7}}' })).toMatch(/dependencies\["is-number"\] is 7; it must be a version, a range or a tag, as a string/);
    expect(await manifestOf({ 'cloud/package.json': '{"dependencies": {"num": "npm:is-number@^7.0.0"}}' })).toBeDefined();
  });

  it('refuses lock files that resolve a package outside the registry, or link a folder', async () => {
    const pkg = { 'cloud/package.json': '{"dependencies": {"is-number": "7.0.0"}}' };
    const lockWith = (entry: unknown) => JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/is-number': entry } });
    expect(await manifestOf({ ...pkg, 'cloud/package-lock.json': lockWith({ version: '7.0.0', resolved: 'https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz' }) })).toBeDefined();
    expect(await refusal({ ...pkg, 'cloud/package-lock.json': lockWith({ resolved: 'file:/etc/passwd' }) })).toMatch(/resolves "node_modules\/is-number" to file:\/etc\/passwd, which is not on the npm registry this server uses \(https:\/\/registry\.npmjs\.org\)/);
    expect(await refusal({ ...pkg, 'cloud/package-lock.json': lockWith({ link: true, resolved: '../x' }) })).toMatch(/links "node_modules\/is-number" to a folder/);
    // Version 1 lock files, and a shrinkwrap, which npm prefers to a package-lock.json.
    const v1 = JSON.stringify({ lockfileVersion: 1, dependencies: { a: { resolved: 'https://registry.npmjs.org/a.tgz', dependencies: { b: { resolved: 'http://169.254.169.254/b.tgz' } } } } });
    expect(await refusal({ ...pkg, 'cloud/npm-shrinkwrap.json': v1, 'cloud/package-lock.json': '{}' })).toMatch(/^cloud\/npm-shrinkwrap\.json resolves "a > b" to http:\/\/169\.254\.169\.254\/b\.tgz/);
    expect(await refusal({ ...pkg, 'cloud/package-lock.json': 'nope' })).toMatch(/^cloud\/package-lock\.json is not valid JSON/);
  });
});

describe('npm as a child process', () => {
  let folder: string;
  let registry: http.Server;
  let registryUrl: string;
  const asked: string[] = [];

  beforeAll(async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-npm-'));
    // A registry that has no package at all, to see that npm goes where the environment says.
    registry = http.createServer((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    registryUrl = `http://127.0.0.1:${(registry.address() as net.AddressInfo).port}/`;
  });

  afterAll(async () => {
    fs.rmSync(folder, { recursive: true, force: true });
    registry.closeAllConnections();
    await new Promise((r) => registry.close(r));
  });

  it('gets the npm settings, proxies and HOME of the server, and none of its other variables', () => {
    const env = npmEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/backyard',
      HTTPS_PROXY: 'http://proxy:3128',
      npm_config_registry: 'https://npm.example.com/',
      NPM_CONFIG_CAFILE: '/etc/ca.pem',
      npm_config_prefix: '/somewhere',
      npm_config_ignore_scripts: 'false',
      BACKYARD_SECRET_KEY: 'secret',
      BACKYARD_SMTP_URL: 'smtps://u:p@host',
      DATABASE_URL: 'postgres://u:p@host/db',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/backyard',
      HTTPS_PROXY: 'http://proxy:3128',
      npm_config_registry: 'https://npm.example.com/',
      NPM_CONFIG_CAFILE: '/etc/ca.pem',
      NO_UPDATE_NOTIFIER: '1',
    });
  });

  it('installs from the registry npm_config_registry names, and fails with npm\'s reason and code', async () => {
    fs.writeFileSync(path.join(folder, 'package.json'), '{"dependencies": {"is-number": "7.0.0"}}');
    const env = { ...process.env, npm_config_registry: registryUrl, npm_config_cache: path.join(folder, '.cache') };
    const failure = await runNpm(['install', '--ignore-scripts', '--no-audit', '--no-fund'], { folder, timeoutMs: 120_000, maxOutputBytes: 64 * 1024, env }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(NpmFailure);
    expect((failure as NpmFailure).code).toBe('E404');
    expect((failure as NpmFailure).message).toContain(`404 Not Found - GET ${registryUrl}is-number`);
    expect((failure as NpmFailure).message).not.toMatch(/_logs|complete log/);
    expect(asked).toContain('/is-number');
  }, 150_000);

  it('stops npm at its time limit', async () => {
    const failure = await runNpm(['install', '--no-audit'], { folder, timeoutMs: 1, maxOutputBytes: 1024 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(NpmFailure);
    expect((failure as NpmFailure).code).toBe('timeout');
    expect((failure as NpmFailure).message).toMatch(/^npm did not finish within 0\.001 s and was stopped$/);
  });
});

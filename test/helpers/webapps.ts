import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import os from 'node:os';
import { afterAll, beforeAll, expect } from 'vitest';
import { imageFilter, reachNetworkName, serviceNetworkHomeFilter, webAppHomeFilter } from '../../src/platform/webapps/labels.js';
import { OFFLINE_IMAGE } from '../../src/platform/devenvs/offlineImage.js';
import { docker, removeNetworks, requireDocker } from './devenvs.js';
import { modernHttpClient, type AnyMcpClient } from './mcpClients.js';
import { startTestServer, type TestServer } from './server.js';

/**
 * Support for the Web App suites (test/webapps*.test.ts, test/mission.test.ts): real `git` on the
 * host, the real Docker engine, apps `FROM` the offline busybox image served by busybox `httpd`.
 */

const exec = promisify(execFile);

/** Server settings of the Web App suites: a short health check time-out so failures come quickly. */
export const WEBAPP_ENV = {
  // Plain containers, whatever the engine is: test/webapps-swarm.test.ts sets `auto` on a swarm it makes.
  BACKYARD_WEBAPP_SWARM: 'off',
  BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS: '4000',
  BACKYARD_WEBAPP_MEMORY_MB: '64',
  BACKYARD_LOG_LEVEL: process.env.BACKYARD_TEST_LOG_LEVEL ?? 'silent',
};

/** What a Web App suite's hooks set up (`webAppSuite`): filled in before its first test. */
export interface WebAppSuite {
  server: TestServer;
  /** Alice's MCP client over streamable HTTP. */
  client: AnyMcpClient;
  /** A temporary folder for the suite's repositories. */
  work: string;
}

/**
 * Registers a Web App suite's hooks: before it, a real Backyard with `env` (WEBAPP_ENV and the suite's
 * own), alice's MCP client over HTTP and a temporary folder named after `workPrefix`; after it, the
 * client and the server closed, every service, container, image and network of the home's Web Apps
 * removed (whatever a failed test left), and the folder deleted.
 */
export function webAppSuite(env: Record<string, string>, workPrefix: string): WebAppSuite {
  const suite = {} as WebAppSuite;
  beforeAll(async () => {
    await requireDocker();
    suite.server = await startTestServer(env);
    suite.client = await modernHttpClient(suite.server.url, suite.server.alice);
    suite.work = fs.mkdtempSync(path.join(os.tmpdir(), workPrefix));
  });
  afterAll(async () => {
    await suite.client?.close();
    if (suite.server) {
      await suite.server.close();
      await removeWebApps(suite.server.home);
    }
    if (suite.work) fs.rmSync(suite.work, { recursive: true, force: true });
  });
  return suite;
}

/**
 * A web app's files: busybox `httpd` serving `/www` on 8080, writing `$GREETING` into
 * `/www/greeting.txt` as it starts (so a test sees the container's variables through the proxy).
 */
export function sampleApp(page: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    Dockerfile: [
      `FROM ${OFFLINE_IMAGE}`,
      'COPY www /www',
      'EXPOSE 8080',
      'CMD ["sh", "-c", "printf %s \\"$GREETING\\" > /www/greeting.txt && echo serving on 8080 && exec httpd -f -v -p 8080 -h /www"]',
      '',
    ].join('\n'),
    'www/index.html': page,
    // A CGI script (busybox httpd runs /cgi-bin/*) that echoes what the request carried.
    'www/cgi-bin/echo.cgi': [
      '#!/bin/sh',
      'printf "Content-Type: text/plain\\r\\n\\r\\n"',
      'echo "method=$REQUEST_METHOD"',
      'echo "query=$QUERY_STRING"',
      'echo "host=$HTTP_HOST"',
      'echo "forwarded-for=$HTTP_X_FORWARDED_FOR"',
      'echo "forwarded-host=$HTTP_X_FORWARDED_HOST"',
      'echo "forwarded-proto=$HTTP_X_FORWARDED_PROTO"',
      'echo "custom=$HTTP_X_CUSTOM"',
      'echo "body=$(head -c "${CONTENT_LENGTH:-0}")"',
      '',
    ].join('\n'),
    ...extra,
  };
}

/**
 * Runs the host's real `git` in `cwd`, isolated from the user's configuration (HOME is `home`,
 * default `cwd`) and never asking for a password (a refused token fails instead of prompting).
 */
export async function git(cwd: string, args: string[], home = cwd): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('git', args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_TERMINAL_PROMPT: '0',
        GIT_ASKPASS: '/bin/false',
        LC_ALL: 'C',
        GIT_AUTHOR_NAME: 'Tester',
        GIT_AUTHOR_EMAIL: 'tester@example.invalid',
        GIT_COMMITTER_NAME: 'Tester',
        GIT_COMMITTER_EMAIL: 'tester@example.invalid',
      },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `git` that must succeed; returns its stdout. */
export async function ok(cwd: string, args: string[], home = cwd): Promise<string> {
  const result = await git(cwd, args, home);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** Writes `files` into the working repository `dir` (created with `main` when new), commits, and returns the commit. */
export async function commit(dir: string, files: Record<string, string | null>, message = 'change'): Promise<string> {
  if (!fs.existsSync(path.join(dir, '.git'))) {
    fs.mkdirSync(dir, { recursive: true });
    await ok(dir, ['init', '-q', '-b', 'main']);
  }
  for (const [file, content] of Object.entries(files)) {
    const full = path.join(dir, file);
    if (content === null) fs.rmSync(full, { force: true });
    else {
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, content, { mode: file.endsWith('.cgi') ? 0o755 : 0o644 });
    }
  }
  await ok(dir, ['add', '-A']);
  await ok(dir, ['commit', '-q', '--allow-empty', '-m', message]);
  return (await ok(dir, ['rev-parse', 'HEAD'])).trim();
}

/** Pushes `branch` of `dir` to the built-in git host of `baseUrl` with `token` as the password. */
export async function push(baseUrl: string, dir: string, owner: string, repo: string, token: string, branch = 'main'): Promise<void> {
  const url = new URL(`${baseUrl}/git/${owner}/${repo}.git`);
  url.username = 'x-access-token';
  url.password = token;
  await ok(dir, ['push', '-q', url.toString(), `${branch}:refs/heads/${branch}`]);
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One HTTP request to `http://<sub>.localhost:<port>/...` (an `appURL` and a path) sent to
 * 127.0.0.1 with the explicit Host header, so no resolver is involved.
 */
export function fetchApp(appURL: string, rawPath = '/', options: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(appURL);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: url.host, ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = request({ host: '127.0.0.1', port: Number(url.port), path: rawPath, method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * What a tool answers, as structuredContent, or `{content}` for the tools that answer plain text
 * (getGuide, getCloudCode); a failure throws with the tool's text.
 */
export async function call(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return (result.structuredContent ?? { content: result.content[0].text }) as Record<string, any>;
}

/** The text of a tool's error answer. */
export async function failure(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  return result.content[0].text as string;
}

/**
 * Polls getDeployment (as an assistant would, every `everyMs`) until the deployment is active,
 * failed or superseded; returns its last answer, logs included.
 */
export async function settle(client: AnyMcpClient, appId: string, deploymentId: string, timeoutMs = 60_000, everyMs = 100): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await call(client, 'getDeployment', { appId, deploymentId, includeBuildLogs: true, includeContainersLogs: true, buildLogsLimit: 200, containersLogsLimit: 200 });
    if (['active', 'failed', 'superseded'].includes(d.status)) return d;
    if (Date.now() > deadline) throw new Error(`deployment ${deploymentId} still ${d.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Removes every container (by label) and image (by name) of Web Apps created by the Backyard of `home`,
 * then the home's account networks that no container uses any more.
 */
export async function removeWebApps(home: string): Promise<void> {
  // Swarm services (an engine in swarm mode, swarm.ts) first: the engine then removes their task containers.
  const swarm = (await docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
  if (swarm.Swarm?.LocalNodeState === 'active' && swarm.Swarm.ControlAvailable) {
    for (const service of await docker.listServices({ filters: webAppHomeFilter(home) })) await docker.getService(service.ID).remove().catch(() => undefined);
  }
  for (const c of await docker.listContainers({ all: true, filters: webAppHomeFilter(home) })) {
    await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
  }
  for (const image of await docker.listImages({ filters: imageFilter(home) })) {
    for (const tag of image.RepoTags ?? []) await docker.getImage(tag).remove().catch(() => undefined);
  }
  await removeNetworks(home);
  // The services' networks: the reach network (unlabelled, by name) before the config-only one it takes its settings from.
  const reach = reachNetworkName(home);
  const serviceNetworks = [...(await docker.listNetworks({ filters: { name: [reach] } })).filter((n) => n.Name === reach), ...(await docker.listNetworks({ filters: serviceNetworkHomeFilter(home) }))];
  for (const network of serviceNetworks) await docker.getNetwork(network.Id).remove().catch(() => undefined);
}

/**
 * The IPv4 address at which containers on `network` reach the host, read from a container's own view:
 * the gateway of its default route in `/proc/net/route` (a throwaway container of the offline image).
 * Docker does not promise a `Gateway` entry in the network's IPAM config (Debian's engine 20.10 lists
 * only the subnet for the default `bridge`), so that entry is never read.
 * @throws Error when the container has no default route (an `internal` network).
 */
export async function hostAddressFromContainers(network = 'bridge'): Promise<string> {
  const out = new PassThrough();
  let table = '';
  out.on('data', (chunk: Buffer) => (table += chunk.toString('latin1')));
  const [result, container] = (await docker.run(OFFLINE_IMAGE, ['cat', '/proc/net/route'], out, {
    Tty: true,
    HostConfig: { NetworkMode: network },
  })) as [{ StatusCode: number }, Docker.Container];
  await container.remove({ force: true }).catch(() => undefined);
  if (result.StatusCode !== 0) throw new Error(`reading /proc/net/route in a container on ${network} exited ${result.StatusCode}: ${table}`);
  const address = defaultGateway(table);
  if (!address) throw new Error(`a container on the network ${network} has no default route:\n${table}`);
  return address;
}

/**
 * The gateway of the default route in the text of `/proc/net/route`: the row whose destination and
 * mask are 0, its gateway column a 32-bit hexadecimal number in the kernel's byte order (little-endian
 * on every machine Docker runs Linux containers on).
 */
export function defaultGateway(procNetRoute: string): string | undefined {
  for (const line of procNetRoute.split(/\r?\n/).slice(1)) {
    const [, destination, gateway, , , , , mask] = line.trim().split(/\s+/);
    if (destination !== '00000000' || mask !== '00000000' || !gateway || !/^[0-9A-F]{8}$/i.test(gateway)) continue;
    const n = Number.parseInt(gateway, 16);
    if (n === 0) continue;
    return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24].join('.');
  }
  return undefined;
}


import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { dockerClient } from '../src/platform/devenvs/engine.js';
import { OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { networkHomeFilter } from '../src/platform/devenvs/labels.js';
import { imageFilter, webAppHomeFilter } from '../src/platform/webapps/labels.js';
import { probe } from '../src/platform/webapps/health.js';

/**
 * Web Apps, with Backyard (`backyard serve`) as a child process:
 * 1. The time from `startDeployment` to `active` for the sample app (busybox httpd `FROM` the offline
 *    image; a new commit each round, so its `COPY` layer is rebuilt), against a bare `docker build`
 *    plus `docker run` of the same context until the page answers, alternating in the same run
 *    (target: within 1.3×). Both wait for the page the same way: polls every 10 ms.
 * 2. Proxy throughput: autocannon (in this process) against `appURL` through Backyard's reverse proxy
 *    and against the container's published loopback port directly (target: at least 70%).
 * Needs a Docker engine and `backyard/devenv:offline` (scripts/ensure-docker).
 */
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/cli.js');
const ROUNDS = Number(process.env.BENCH_DEPLOYS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const exec = promisify(execFile);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

const DOCKERFILE = `FROM ${OFFLINE_IMAGE}\nCOPY www /www\nEXPOSE 8080\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`;

/** Writes the sample app's files into `dir` with a page that differs each round. */
function writeApp(dir: string, round: number): void {
  fs.mkdirSync(path.join(dir, 'www'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'Dockerfile'), DOCKERFILE);
  fs.writeFileSync(path.join(dir, 'www', 'index.html'), `<!doctype html><title>Bench</title><h1>Round ${round}</h1>\n${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(20)}`);
}

const gitEnv = (home: string) => ({
  PATH: process.env.PATH ?? '',
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
});

/** Polls until `GET /` on the loopback port answers 2xx or 3xx, every 10 ms. */
async function waitForPage(port: number): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    const r = await probe(port, '/', 1000);
    if ('status' in r && r.status < 400) return;
    await sleep(10);
  }
  throw new Error(`port ${port} never answered`);
}

export async function webAppsBench(): Promise<void> {
  const docker = dockerClient(process.env.DOCKER_HOST);
  try {
    await docker.ping();
    await docker.getImage(OFFLINE_IMAGE).inspect();
  } catch {
    console.log(`skipped: no Docker engine answers or ${OFFLINE_IMAGE} is missing (run bash scripts/ensure-docker)`);
    return;
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-webapps-'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-webapps-work-'));
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const env = { PATH: process.env.PATH ?? '', HOME: home, BACKYARD_HOME: home, BACKYARD_PORT: String(port), BACKYARD_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}) };
  const token = execFileSync(process.execPath, [CLI, 'account', 'create', 'bench'], { env, encoding: 'utf8' }).trim();
  let child: ChildProcess | undefined = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const rest = async (method: string, p: string, body?: unknown) => {
    const response = await fetch(`${base}/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${p}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, any>;
  };
  const untilActive = async (appId: string, deploymentId: string) => {
    for (;;) {
      const d = await rest('GET', `/web-apps/${appId}/deployments/${deploymentId}`);
      if (d.status === 'active') return;
      if (d.status === 'failed' || d.status === 'superseded') throw new Error(`deployment ${d.status}: ${d.error}`);
      await sleep(10);
    }
  };
  try {
    for (let i = 0; i < 200; i++) {
      if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) break;
      await sleep(50);
    }
    const repo = path.join(work, 'site');
    writeApp(repo, 0);
    const git = (args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv(work), stdio: ['ignore', 'pipe', 'pipe'] });
    git(['init', '-q', '-b', 'main']);
    const commitAndPush = () => {
      git(['add', '-A']);
      git(['commit', '-q', '-m', 'round']);
      git(['push', '-q', `http://bench:${token}@localhost:${port}/git/bench/site.git`, 'main']);
    };
    commitAndPush();
    const app = await rest('POST', '/web-apps', { appName: 'bench-site', repositoryOwnerLogin: 'bench', repositoryName: 'site' });
    await untilActive(app.appId, app.lastDeployment.id);
    const appContainers = () => docker.listContainers({ filters: { label: [`dev.backyard.webapp.id=${app.appId}`] } });

    const backyard: number[] = [];
    const bare: number[] = [];
    const runBare = async (round: number) => {
      const ctx = path.join(work, `bare-${round}`);
      writeApp(ctx, round);
      const tag = `backyard-bench-bare:${round}`;
      const start = performance.now();
      await exec('docker', ['build', '-q', '-t', tag, ctx]);
      const id = (await exec('docker', ['run', '-d', '-p', '127.0.0.1::8080', tag])).stdout.trim();
      const published = (await exec('docker', ['port', id, '8080/tcp'])).stdout.trim().split('\n')[0]!;
      await waitForPage(Number(published.slice(published.lastIndexOf(':') + 1)));
      bare.push(performance.now() - start);
      await exec('docker', ['rm', '-f', id]);
      await exec('docker', ['rmi', tag]);
    };
    const runBackyard = async (round: number) => {
      writeApp(repo, round);
      commitAndPush();
      const start = performance.now();
      const deployment = await rest('POST', `/web-apps/${app.appId}/deployments`);
      await untilActive(app.appId, deployment.id);
      backyard.push(performance.now() - start);
      // The superseded container drains and goes (not timed).
      for (let i = 0; i < 300 && (await appContainers()).length > 1; i++) await sleep(50);
    };
    for (let round = 1; round <= ROUNDS; round++) {
      if (round % 2) {
        await runBare(round);
        await runBackyard(round);
      } else {
        await runBackyard(round);
        await runBare(round);
      }
    }
    const ratio = median(backyard) / median(bare);
    console.log(`bare docker build + docker run until the page answers: ${median(bare).toFixed(0).padStart(5)} ms median over ${ROUNDS}`);
    console.log(`startDeployment until active (clone, build, run, health): ${median(backyard).toFixed(0).padStart(5)} ms median over ${ROUNDS}  ${ratio.toFixed(2)}× bare (target: within 1.3×)`);

    const [container] = await appContainers();
    const direct = container!.Ports.find((p) => p.PrivatePort === 8080 && p.PublicPort)!.PublicPort;
    const host = `bench-site.localhost:${port}`;
    const load = async (url: string, headers: Record<string, string> = {}) => {
      const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      return r.requests.average;
    };
    await autocannon({ url: `http://127.0.0.1:${direct}/`, connections: CONNECTIONS, duration: 1 });
    await autocannon({ url: `http://127.0.0.1:${port}/`, connections: CONNECTIONS, duration: 1, headers: { host } });
    const directRates: number[] = [];
    const proxyRates: number[] = [];
    for (let i = 0; i < 2; i++) {
      directRates.push(await load(`http://127.0.0.1:${direct}/`));
      proxyRates.push(await load(`http://127.0.0.1:${port}/`, { host }));
    }
    const directRate = directRates.reduce((a, b) => a + b) / directRates.length;
    const proxyRate = proxyRates.reduce((a, b) => a + b) / proxyRates.length;
    console.log(`GET / on the container's published port, ${CONNECTIONS} connections: ${directRate.toFixed(0).padStart(6)} req/s`);
    console.log(`GET / through appURL (the reverse proxy), ${CONNECTIONS} connections: ${proxyRate.toFixed(0).padStart(6)} req/s  ${((proxyRate / directRate) * 100).toFixed(0)}% of direct (target: at least 70%)`);
  } finally {
    if (child) {
      const proc = child;
      child = undefined;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    for (const c of await docker.listContainers({ all: true, filters: webAppHomeFilter(home) })) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    for (const image of await docker.listImages({ filters: imageFilter(home) })) {
      for (const tag of image.RepoTags ?? []) await docker.getImage(tag).remove().catch(() => undefined);
    }
    for (const n of await docker.listNetworks({ filters: networkHomeFilter(home) })) await docker.getNetwork(n.Id).remove().catch(() => undefined);
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

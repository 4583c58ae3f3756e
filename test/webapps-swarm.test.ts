/**
 * Web Apps as Docker Swarm services, on the real engine when it is a swarm manager (CI makes one:
 * `.ci/run` runs `docker swarm init --advertise-addr 127.0.0.1` around this file). A Web App with two
 * replicas answers through Backyard's proxy while one task's container is killed, through a redeploy
 * (a rolling update, start-first) under a steady request loop, and leaves no service, network or
 * volume once deleted. Without a swarm the file is skipped, saying why.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KIND_WEBAPP, LABEL_HOME, LABEL_KIND, LABEL_TASK_DEPLOYMENT, LABEL_WEBAPP, reachNetworkName, serviceNetworkHomeFilter } from '../src/platform/webapps/labels.js';
import { OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { SKIP_DOCKER, docker } from './helpers/devenvs.js';
import type { AnyMcpClient } from './helpers/mcpClients.js';
import type { TestServer } from './helpers/server.js';
import { WEBAPP_ENV, call, commit, fetchApp, push, sampleApp, settle, webAppSuite } from './helpers/webapps.js';

/** Why the file does not run, or undefined when the engine is a swarm manager. */
async function skipReason(): Promise<string | undefined> {
  if (SKIP_DOCKER) return 'BACKYARD_SKIP_DOCKER=1';
  try {
    const info = (await docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
    if (info.Swarm?.LocalNodeState === 'active' && info.Swarm.ControlAvailable) return undefined;
    return `the Docker engine is not a swarm manager (Swarm.LocalNodeState ${info.Swarm?.LocalNodeState ?? 'unknown'}); run docker swarm init --advertise-addr 127.0.0.1 to run it`;
  } catch (error) {
    return `the Docker engine cannot be reached (${(error as Error).message})`;
  }
}

const SKIP = await skipReason();
if (SKIP) console.warn(`test/webapps-swarm.test.ts skipped: ${SKIP}`);

/** A page that names the container answering it, so a test sees which task served a request. */
const hostCgi = ['#!/bin/sh', 'printf "Content-Type: text/plain\\r\\n\\r\\n"', 'hostname', ''].join('\n');

/**
 * Sends GET requests to `url` from `workers` loops until `stop` says so; every answer other than a
 * 200 (or an error) is a failure, kept with its text.
 */
function requestLoop(appURL: string, path: string, workers = 3) {
  let running = true;
  const failures: string[] = [];
  const bodies: string[] = [];
  let count = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const started = Date.now();
      try {
        const answer = await fetchApp(appURL, path);
        count++;
        if (answer.status !== 200) failures.push(`${answer.status} after ${Date.now() - started} ms: ${answer.text.slice(0, 200)}`);
        else bodies.push(answer.text);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  });
  return {
    get count() {
      return count;
    },
    bodies,
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

// Builds and rolling updates of two tasks each, on a 2-core machine that may be busy: minutes, not seconds.
describe.skipIf(SKIP !== undefined)('a Web App as a Docker Swarm service with two replicas, through the proxy', { timeout: 180_000 }, () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let work: string;
  let repo: string;
  let token: string;
  let appId: string;
  let appURL: string;

  const servicesOf = (id: string) => docker.listServices({ filters: { label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_WEBAPP}=${id}`] } });
  const runningTasks = async (id: string) => {
    const [service] = await servicesOf(id);
    if (!service) return [];
    const tasks = (await docker.listTasks({ filters: { service: [service.ID] } })) as Array<{ DesiredState: string; Status: { State: string; ContainerStatus?: { ContainerID?: string } } }>;
    return tasks.filter((t) => t.DesiredState === 'running' && t.Status.State === 'running');
  };
  /** The distinct container host names that answered `n` requests. */
  const answering = async (n: number) => {
    const names = new Set<string>();
    for (let i = 0; i < n; i++) {
      const answer = await fetchApp(appURL, '/cgi-bin/host.cgi');
      expect(answer.status).toBe(200);
      names.add(answer.text.trim());
    }
    return names;
  };

  const suite = webAppSuite({ ...WEBAPP_ENV, BACKYARD_WEBAPP_SWARM: 'auto', BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS: '15000' }, 'backyard-webapps-swarm-');
  beforeAll(async () => {
    ({ server, client, work } = suite);
    repo = path.join(work, 'swarmed');
    ({ token } = await call(client, 'createRepohostInstallationAccessToken', {}));
  });

  it('createWebApp with replicas 2 runs a service of two tasks, with no published port, and the proxy spreads requests over both', async () => {
    await commit(repo, sampleApp('<h1>version one</h1>\n', { 'www/cgi-bin/host.cgi': hostCgi }), 'one');
    await push(server.url, repo, 'alice', 'swarmed', token);
    const created = await call(client, 'createWebApp', { appName: 'swarmed', repositoryOwnerLogin: 'alice', repositoryName: 'swarmed', replicas: 2 });
    expect(created).toMatchObject({ replicas: 2, status: 'deploying' });
    appId = created.appId;
    appURL = created.appURL;
    const done = await settle(client, appId, created.lastDeployment.id, 120_000);
    expect(done, done.error).toMatchObject({ status: 'active', error: '' });

    const [service] = await servicesOf(appId);
    expect(service).toBeDefined();
    expect(service!.Spec?.Mode?.Replicated?.Replicas).toBe(2);
    expect(service!.Spec?.EndpointSpec).toMatchObject({ Mode: 'dnsrr' });
    expect(service!.Spec?.EndpointSpec?.Ports ?? []).toEqual([]);
    expect(service!.Spec?.UpdateConfig).toMatchObject({ Order: 'start-first' });
    const tasks = await runningTasks(appId);
    expect(tasks).toHaveLength(2);
    // No task container publishes a port: the proxy alone reaches them.
    for (const task of tasks) {
      const info = await docker.getContainer(task.Status.ContainerStatus!.ContainerID!).inspect();
      expect(Object.values(info.NetworkSettings.Ports ?? {}).flat().filter(Boolean)).toEqual([]);
      expect(info.Config.Labels[LABEL_TASK_DEPLOYMENT]).toBe(done.id);
    }

    expect((await fetchApp(appURL)).text).toBe('<h1>version one</h1>\n');
    await expect.poll(async () => (await answering(8)).size, { timeout: 20_000, interval: 200 }).toBe(2);
    expect(await call(client, 'getWebApp', { appId })).toMatchObject({ status: 'running', replicas: 2 });
  });

  it('keeps answering while one task\'s container is killed, and the engine replaces the task', async () => {
    const [victim] = await runningTasks(appId);
    const loop = requestLoop(appURL, '/');
    await expect.poll(() => loop.count, { timeout: 10_000, interval: 20 }).toBeGreaterThan(20);
    await docker.getContainer(victim!.Status.ContainerStatus!.ContainerID!).kill();
    const killedAt = loop.count;
    await expect.poll(() => loop.count - killedAt, { timeout: 30_000, interval: 20 }).toBeGreaterThan(100);
    // The engine starts a task in its place; the proxy takes it in once it answers.
    await expect.poll(async () => (await runningTasks(appId)).map((t) => t.Status.ContainerStatus?.ContainerID).filter((id) => id !== victim!.Status.ContainerStatus!.ContainerID).length, { timeout: 60_000, interval: 200 }).toBe(2);
    await loop.stop();
    expect(loop.failures.slice(0, 3), `${loop.failures.length} failed of ${loop.count}`).toEqual([]);
    await expect.poll(async () => (await answering(8)).size, { timeout: 20_000, interval: 200 }).toBe(2);
  });

  it('a redeploy under a steady request loop answers every request, first the old page and then the new one', async () => {
    const previous = (await call(client, 'getWebApp', { appId })).activeDeployment.id as string;
    const loop = requestLoop(appURL, '/');
    await expect.poll(() => loop.count, { timeout: 10_000, interval: 20 }).toBeGreaterThan(20);
    await commit(repo, sampleApp('<h1>version two</h1>\n', { 'www/cgi-bin/host.cgi': hostCgi }), 'two');
    await push(server.url, repo, 'alice', 'swarmed', token);
    const deployment = await call(client, 'startDeployment', { appId });
    const done = await settle(client, appId, deployment.id, 120_000);
    expect(done, done.error).toMatchObject({ status: 'active' });
    await expect.poll(() => loop.bodies.at(-1), { timeout: 20_000, interval: 50 }).toBe('<h1>version two</h1>\n');
    await loop.stop();
    expect(loop.failures.slice(0, 3), `${loop.failures.length} failed of ${loop.count}`).toEqual([]);
    expect(loop.bodies).toContain('<h1>version one</h1>\n');
    // One service, updated in place: two tasks of the new deployment run.
    expect(await servicesOf(appId)).toHaveLength(1);
    await expect.poll(async () => (await runningTasks(appId)).length, { timeout: 30_000, interval: 200 }).toBe(2);
    // The old tasks go a moment after the new deployment is active (they end their requests first).
    await expect.poll(async () => (await docker.listContainers({ filters: { label: [`${LABEL_TASK_DEPLOYMENT}=${previous}`] } })).length, { timeout: 30_000, interval: 200 }).toBe(0);
  });

  it('a deployment whose tasks exit fails saying so, the service goes back to the active image, and every request is answered meanwhile', async () => {
    const before = (await servicesOf(appId))[0]!.Spec?.TaskTemplate?.ContainerSpec?.Image;
    const loop = requestLoop(appURL, '/');
    await commit(repo, { Dockerfile: `FROM ${OFFLINE_IMAGE}\nCMD ["sh", "-c", "echo giving up; exit 3"]\n` }, 'broken');
    await push(server.url, repo, 'alice', 'swarmed', token);
    const deployment = await call(client, 'startDeployment', { appId });
    const done = await settle(client, appId, deployment.id, 120_000);
    expect(done.status).toBe('failed');
    expect(done.error, done.error).toMatch(/^Starting the container failed: A task of the service (failed|complete).*exit code 3/);
    await expect.poll(async () => (await servicesOf(appId))[0]!.Spec?.TaskTemplate?.ContainerSpec?.Image, { timeout: 30_000, interval: 200 }).toBe(before);
    await expect.poll(async () => (await runningTasks(appId)).length, { timeout: 60_000, interval: 200 }).toBe(2);
    await loop.stop();
    expect(loop.failures.slice(0, 3), `${loop.failures.length} failed of ${loop.count}`).toEqual([]);
    expect(new Set(loop.bodies)).toEqual(new Set(['<h1>version two</h1>\n']));
    expect(await call(client, 'getWebApp', { appId })).toMatchObject({ status: 'failed', activeDeployment: { status: 'active' } });
  });

  it('stopWebApp scales the service to no task and the proxy says it is stopped; startWebApp runs the replicas again', async () => {
    // (Its status stays `failed`: its last deployment failed, above.)
    await call(client, 'stopWebApp', { appId });
    await expect.poll(async () => (await runningTasks(appId)).length, { timeout: 60_000, interval: 200 }).toBe(0);
    const stopped = await fetchApp(appURL);
    expect(stopped.status).toBe(503);
    expect(stopped.text).toContain('is stopped');
    expect(await call(client, 'startWebApp', { appId })).toMatchObject({ replicas: 2 });
    await expect.poll(async () => (await runningTasks(appId)).length, { timeout: 60_000, interval: 200 }).toBe(2);
    await expect.poll(async () => (await fetchApp(appURL)).text, { timeout: 30_000, interval: 200 }).toBe('<h1>version two</h1>\n');
  });

  it('deleteWebApp leaves no service, container, network or volume of it', async () => {
    await call(client, 'deleteWebApp', { appId });
    expect(await servicesOf(appId)).toEqual([]);
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_WEBAPP}=${appId}`] } })).toEqual([]);
    expect(await docker.listNetworks({ filters: serviceNetworkHomeFilter(server.home) })).toEqual([]);
    // The reach network itself carries no labels (swarm.ts says why): by its name.
    expect((await docker.listNetworks({ filters: { name: [reachNetworkName(server.home)] } })).filter((n) => n.Name === reachNetworkName(server.home))).toEqual([]);
    expect((await docker.listVolumes({ filters: { label: [`${LABEL_HOME}=${server.home}`] } })).Volumes ?? []).toEqual([]);
    expect((await fetchApp(appURL)).status).toBe(404);
  });
});

describe.skipIf(SKIP !== undefined)('BACKYARD_WEBAPP_SWARM=off on a swarm manager', { timeout: 180_000 }, () => {
  const suite = webAppSuite(WEBAPP_ENV, 'backyard-webapps-noswarm-');

  it('runs a Web App as a plain container, with no service, and the proxy serves it', async () => {
    expect(WEBAPP_ENV.BACKYARD_WEBAPP_SWARM).toBe('off');
    const { client, server, work } = suite;
    const repo = path.join(work, 'plain');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    await commit(repo, sampleApp('<h1>in a container</h1>\n'), 'one');
    await push(server.url, repo, 'alice', 'plain', token);
    const created = await call(client, 'createWebApp', { appName: 'plain', repositoryOwnerLogin: 'alice', repositoryName: 'plain' });
    const done = await settle(client, created.appId, created.lastDeployment.id, 120_000);
    expect(done, done.error).toMatchObject({ status: 'active', error: '' });
    expect(await docker.listServices({ filters: { label: [`${LABEL_WEBAPP}=${created.appId}`] } })).toEqual([]);
    const containers = await docker.listContainers({ filters: { label: [`${LABEL_WEBAPP}=${created.appId}`] } });
    expect(containers).toHaveLength(1);
    expect(containers[0]!.Labels[LABEL_TASK_DEPLOYMENT]).toBeUndefined();
    expect((await fetchApp(created.appURL)).text).toBe('<h1>in a container</h1>\n');
    await call(client, 'deleteWebApp', { appId: created.appId });
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_WEBAPP}=${created.appId}`] } })).toEqual([]);
  });
});

/**
 * The parts of Web Apps on Docker Swarm that need no engine: the `replicas` rule, the service's
 * Engine API body (swarm.ts), the names of services and networks (labels.ts), and the proxy's round
 * robin over a service's tasks (tasks.ts, proxy.ts) with real HTTP servers on loopback standing in for tasks.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Docker from 'dockerode';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { WebAppProxy } from '../src/platform/webapps/proxy.js';
import type { RouteRow } from '../src/platform/webapps/store.js';
import type { SwarmServices, TaskTarget } from '../src/platform/webapps/swarm.js';
import { TaskTargets } from '../src/platform/webapps/tasks.js';
import { ManagementError } from '../src/errors.js';
import { LABEL_ACCOUNT, LABEL_TASK_DEPLOYMENT, LABEL_WEBAPP, accountOverlayName, reachNetworkName, serviceName } from '../src/platform/webapps/labels.js';
import { MAX_REPLICAS, MIN_REPLICAS, checkReplicas } from '../src/platform/webapps/names.js';
import { serviceSpec } from '../src/platform/webapps/swarm.js';

const settings = { home: '/srv/backyard', dockerHost: undefined, memoryMb: 64, cpus: 0.5, swarm: 'auto' as const };
const input = { accountId: 'acc1', webAppId: 'app1', deploymentId: 'dep1', image: 'backyard-webapp-x/site:dep1', port: 8080, env: ['A=1'], replicas: 3 };

describe('replicas', () => {
  it('accepts every integer from 1 to 10', () => {
    fc.assert(fc.property(fc.integer({ min: MIN_REPLICAS, max: MAX_REPLICAS }), (n) => checkReplicas(n)));
  });

  it('refuses anything else with a text naming replicas and its bounds', () => {
    const bad = fc.oneof(
      fc.integer().filter((n) => n < MIN_REPLICAS || n > MAX_REPLICAS),
      fc.double({ noNaN: false }).filter((n) => !Number.isInteger(n)),
    );
    fc.assert(
      fc.property(bad, (n) => {
        let thrown: unknown;
        try {
          checkReplicas(n);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(ManagementError);
        expect((thrown as Error).message).toMatch(/^replicas must be an integer from 1 to 10 \(it is /);
      }),
    );
  });
});

describe('the service of a Web App', () => {
  const spec = serviceSpec(settings, input);

  it('runs the replicas with rolling start-first updates, DNS round robin and no published port', () => {
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 3 } });
    expect(spec.UpdateConfig).toMatchObject({ Parallelism: 1, Order: 'start-first' });
    expect(spec.RollbackConfig).toMatchObject({ Order: 'start-first' });
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
  });

  it('is on the account\'s overlay and the home\'s reach network, labelled like the containers, confined like them', () => {
    expect(spec.TaskTemplate?.Networks).toEqual([{ Target: accountOverlayName(settings.home, 'acc1') }, { Target: reachNetworkName(settings.home) }]);
    expect(spec.Labels).toMatchObject({ [LABEL_ACCOUNT]: 'acc1', [LABEL_WEBAPP]: 'app1' });
    const container = spec.TaskTemplate?.ContainerSpec as Record<string, any>;
    expect(container).toMatchObject({ Image: input.image, Env: ['A=1'], Labels: { [LABEL_TASK_DEPLOYMENT]: 'dep1', [LABEL_WEBAPP]: 'app1' }, CapabilityDrop: ['ALL'] });
    // No health check in the spec: the image's own HEALTHCHECK applies when it has one.
    expect(container.HealthCheck).toBeUndefined();
    expect(spec.TaskTemplate?.Resources?.Limits).toMatchObject({ MemoryBytes: 64 * 1024 * 1024, NanoCPUs: 500_000_000 });
  });

  it('names fit the engine\'s 63 characters and differ by home and app', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.string({ minLength: 1, maxLength: 40 }), (home, id) => {
        for (const name of [serviceName(home, id), accountOverlayName(home, id), reachNetworkName(home)]) expect(name).toMatch(/^[a-z0-9-]{1,63}$/);
      }),
    );
    expect(serviceName('/a', 'x')).not.toBe(serviceName('/b', 'x'));
    expect(serviceName('/a', 'x')).not.toBe(serviceName('/a', 'y'));
  });
});

describe('the proxy over the tasks of a service', () => {
  const log = createLogger('silent');
  /** Real servers standing in for task containers: each answers its own name, and 200 at /health. */
  const servers: http.Server[] = [];
  const names: string[] = [];
  let closedPort: number;
  let targets: TaskTarget[];
  let proxyServer: http.Server;
  let proxyPort: number;
  let tasks: TaskTargets;
  let proxy: WebAppProxy;
  const route: RouteRow = { id: 'app1', app_name: 'app', active_deployment_id: 'dep1', host_port: null, last_status: 'active', service: 1, container_port: 0, health_check_path: '/health', stopped: 0 };

  const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  const send = (method: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: proxyPort, path: '/', method, agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(method === 'POST' ? 'x' : undefined);
    });

  beforeAll(async () => {
    for (const name of ['task-a', 'task-b']) {
      const server = http.createServer((req, res) => {
        req.resume();
        res.end(name);
      });
      servers.push(server);
      names.push(name);
    }
    const ports = await Promise.all(servers.map(listen));
    // A port nothing listens on: a task that died.
    const gone = http.createServer();
    closedPort = await listen(gone);
    await new Promise((r) => gone.close(r));
    targets = [...ports, closedPort].map((port, i) => ({ taskId: `t${i}`, containerId: `c${i}`, deploymentId: 'dep1', ip: '127.0.0.1', port }));
    const swarm = { targets: async () => targets } as unknown as SwarmServices;
    // An engine without events: the list alone says which tasks there are.
    const docker = { getEvents: async () => Promise.reject(new Error('no engine here')) } as unknown as Docker;
    tasks = new TaskTargets(docker, swarm, log, (key) => proxy.letGo(key));
    proxy = new WebAppProxy(
      {
        route: async () => route,
        relocate: async () => undefined,
        address: () => undefined,
        forget: () => undefined,
        task: (r, exclude) => tasks.pick(r, exclude),
        taskFailed: (id, target, error) => tasks.fail(id, target, error),
      },
      log,
    );
    proxyServer = http.createServer((req, res) => proxy.web(req, res, route));
    proxyPort = await listen(proxyServer);
  });
  afterAll(async () => {
    tasks?.close();
    proxy?.close();
    for (const server of [...servers, proxyServer]) server?.closeAllConnections?.();
    await Promise.all([...servers, proxyServer].map((server) => new Promise((r) => server?.close(r))));
  });

  it('sends requests round robin over the tasks that answered the health check, never to one that did not', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const answer = await send('GET');
      expect(answer.status).toBe(200);
      seen.push(answer.text);
    }
    expect(new Set(seen)).toEqual(new Set(names));
    // Strict alternation between the two healthy tasks.
    for (let i = 1; i < seen.length; i++) expect(seen[i]).not.toBe(seen[i - 1]);
  });

  it('a task that stops answering is skipped: every GET is answered by another, and at most one POST (which cannot be sent twice) gets a 502', async () => {
    servers[1]!.closeAllConnections();
    await new Promise((r) => servers[1]!.close(r));
    for (let i = 0; i < 10; i++) expect(await send('GET')).toEqual({ status: 200, text: 'task-a' });
    // The list is read again (a second later) and task-b is probed again, in vain: it stays out.
    await new Promise((r) => setTimeout(r, 1_200));
    const posts = [];
    for (let i = 0; i < 10; i++) posts.push(await send('POST'));
    expect(posts.filter((p) => p.status === 502).length).toBeLessThanOrEqual(1);
    expect(posts.filter((p) => p.status === 200).every((p) => p.text === 'task-a')).toBe(true);
  });

  it('with no task answering, a GET waits for one and gets it once a task answers again', async () => {
    servers[0]!.closeAllConnections();
    await new Promise((r) => servers[0]!.close(r));
    const revived = http.createServer((req, res) => {
      req.resume();
      res.end('task-c');
    });
    servers.push(revived);
    const pending = send('GET');
    // A new task appears in the engine's list a moment later.
    await new Promise((r) => setTimeout(r, 300));
    const port = await listen(revived);
    targets = [{ taskId: 't9', containerId: 'c9', deploymentId: 'dep1', ip: '127.0.0.1', port }];
    expect(await pending).toEqual({ status: 200, text: 'task-c' });
  });
});

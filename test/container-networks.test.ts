/**
 * No network path between different accounts' containers (docs/design.md, "Security stance"), against
 * the real engine: each account's development environments and Web App containers are on a network of their own, where they reach each other; another account's
 * environment cannot connect to them (Docker drops traffic between bridge networks, so `nc -w 3`
 * times out); a Web App is reached by others only through Backyard's proxy. On the default `bridge`
 * (every container beside every other) the reachability checks fail.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { LABEL_ACCOUNT, LABEL_HOME, LABEL_KIND, KIND_NETWORK, accountNetworkName, networkHomeFilter } from '../src/platform/devenvs/labels.js';
import { AccountNetworks } from '../src/platform/devenvs/networks.js';
import { openPlatform } from '../src/platform/platform.js';
import { webAppHomeFilter } from '../src/platform/webapps/labels.js';
import { DEVENV_ENV, SKIP_DOCKER, containersOf, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { modernHttpClient, type AnyMcpClient } from './helpers/mcpClients.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { WEBAPP_ENV, call, commit, fetchApp, push, removeWebApps, sampleApp, settle } from './helpers/webapps.js';

/** A container's network mode and the address it has on each network it is on. */
async function networksOf(containerId: string): Promise<{ mode: string | undefined; addresses: Record<string, string> }> {
  const info = await docker.getContainer(containerId).inspect();
  const addresses = Object.fromEntries(Object.entries(info.NetworkSettings.Networks).map(([name, n]) => [name, n.IPAddress]));
  return { mode: info.HostConfig.NetworkMode, addresses };
}

describe.skipIf(SKIP_DOCKER)('containers of different accounts', () => {
  let server: TestServer;
  let alice: AnyMcpClient;
  let bob: AnyMcpClient;
  let work: string;
  const networkOf = async (login: string) => accountNetworkName(server.home, (await server.platform.services.accounts.findByLogin(login))!.id);
  const environment = async (client: AnyMcpClient, chatTitle: string): Promise<string> => (await call(client, 'createDevelopmentEnvironment', { chatTitle })).id;
  const run = (client: AnyMcpClient, id: string, command: string) => call(client, 'executeCommand', { developmentEnvironmentId: id, command });
  /** What `ip:port` answers to `request` from inside an environment, and nc's exit code (1 when it cannot connect within 3 s). */
  const reach = async (client: AnyMcpClient, id: string, ip: string, port: number, request = '') => {
    const result = await run(client, id, `printf '${request}' | nc -w 3 ${ip} ${port}; echo "nc exit $?"`);
    expect(result.status, 'nc -w 3 ends within executeCommand\'s wait').toBe('exited');
    return result.stdout as string;
  };
  const containerOf = async (environmentId: string) => (await containersOf(environmentId))[0]!.Id;

  beforeAll(async () => {
    await requireDocker();
    // nc gives up after 3 s: wait long enough for it to say so.
    server = await startTestServer({ ...DEVENV_ENV, ...WEBAPP_ENV, BACKYARD_EXEC_WAIT_MS: '15000' });
    alice = await modernHttpClient(server.url, server.alice);
    bob = await modernHttpClient(server.url, server.bob);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-networks-'));
  });
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    if (server) {
      await server.platform.services.webApps.idle();
      await server.close();
      await removeWebApps(server.home);
      await removeDevenvs(server.home);
      // The clean-up helpers leave no network of this home behind.
      expect(await docker.listNetworks({ filters: networkHomeFilter(server.home) })).toEqual([]);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('development environments: one account\'s reach each other, another account\'s cannot connect', async () => {
    const listener = await environment(bob, 'bob listens');
    const neighbour = await environment(bob, 'bob connects');
    const stranger = await environment(alice, 'alice tries');
    expect(await run(bob, listener, 'nc -ll -p 8081 -e echo hello >/dev/null 2>&1 & echo listening')).toMatchObject({ status: 'exited', stdout: 'listening\n' });
    const listenerAt = await networksOf(await containerOf(listener));
    // Its address wherever it is (checked below), so that reachability is tested on any network.
    const ip = Object.values(listenerAt.addresses)[0]!;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

    // Positive control: the same account's second environment gets the answer (retried while nc starts).
    await expect.poll(() => reach(bob, neighbour, ip, 8081), { timeout: 15_000, interval: 200 }).toBe('hello\nnc exit 0\n');
    // Another account's environment cannot connect at all: no answer, nc fails.
    expect(await reach(alice, stranger, ip, 8081)).toMatch(/^nc exit [1-9]\d*\n$/);

    // Each container is on its account's network and on no other.
    expect(listenerAt.mode).toBe((await networkOf('bob')));
    expect(Object.keys(listenerAt.addresses)).toEqual([(await networkOf('bob'))]);
    expect(Object.keys((await networksOf(await containerOf(neighbour))).addresses)).toEqual([(await networkOf('bob'))]);
    const strangerAt = await networksOf(await containerOf(stranger));
    expect(strangerAt.mode).toBe((await networkOf('alice')));
    expect(Object.keys(strangerAt.addresses)).toEqual([(await networkOf('alice'))]);
    expect((await networkOf('alice'))).not.toBe((await networkOf('bob')));
    // The networks carry the home and the account.
    const network = await docker.getNetwork((await networkOf('bob'))).inspect();
    expect(network).toMatchObject({ Driver: 'bridge', Labels: { [LABEL_KIND]: KIND_NETWORK, [LABEL_HOME]: server.home, [LABEL_ACCOUNT]: (await server.platform.services.accounts.findByLogin('bob'))!.id } });
  }, 90_000);

  it('a Web App container: its account\'s environments reach it, another account\'s only through the proxy', async () => {
    const repo = path.join(work, 'site');
    await commit(repo, sampleApp('<h1>Bob only</h1>\n'), 'first');
    await push(server.url, repo, 'bob', 'site', (await call(bob, 'createRepohostInstallationAccessToken', {})).token);
    const created = await call(bob, 'createWebApp', { appName: 'site', repositoryOwnerLogin: 'bob', repositoryName: 'site' });
    expect(await settle(bob, created.appId, created.lastDeployment.id)).toMatchObject({ status: 'active' });
    const bobId = (await server.platform.services.accounts.findByLogin('bob'))!.id;
    const [container] = await docker.listContainers({ filters: { label: [...webAppHomeFilter(server.home).label, `${LABEL_ACCOUNT}=${bobId}`] } });
    const at = await networksOf(container!.Id);
    const ip = Object.values(at.addresses)[0]!;

    const own = await environment(bob, 'bob fetches');
    const stranger = await environment(alice, 'alice fetches');
    const request = 'GET / HTTP/1.0\\r\\n\\r\\n';
    expect(await reach(bob, own, ip, 8080, request)).toMatch(/^HTTP\/1\.[01] 200[\s\S]*<h1>Bob only<\/h1>[\s\S]*nc exit 0\n$/);
    expect(await reach(alice, stranger, ip, 8080, request)).toMatch(/^nc exit [1-9]\d*\n$/);
    expect(at.mode).toBe((await networkOf('bob')));
    expect(Object.keys(at.addresses)).toEqual([(await networkOf('bob'))]);

    // Everyone else reaches it through the proxy, which connects to the container's address on its network.
    const webApps = server.platform.services.webApps;
    await expect.poll(async () => (await webApps.addresses.settle(), webApps.addresses.get(created.lastDeployment.id)), { timeout: 10_000 }).toEqual({ ip, port: 8080 });
    const page = await fetchApp(created.appURL);
    expect(page).toMatchObject({ status: 200, text: '<h1>Bob only</h1>\n' });
  }, 120_000);

  it('leaves one network when two Backyards on the home create an account\'s network at once', async () => {
    // Docker 20.10 lets simultaneous creates of one name all succeed; the duplicates are removed, the oldest kept.
    const log = createLogger('silent');
    const keepers = [new AccountNetworks(docker, server.home, log), new AccountNetworks(docker, server.home, log), new AccountNetworks(docker, server.home, log)];
    const accountId = `race-${process.pid}`;
    const names = await Promise.all(keepers.map((k) => k.ensure(accountId)));
    expect(new Set(names)).toEqual(new Set([accountNetworkName(server.home, accountId)]));
    const listed = await docker.listNetworks({ filters: networkHomeFilter(server.home) });
    expect(listed.filter((n) => n.Name === names[0])).toHaveLength(1);
  });

  it('creates an account\'s network again when it was removed by hand', async () => {
    // An account of its own, whose one environment is the only container on its network.
    const carol = await modernHttpClient(server.url, (await server.platform.services.accounts.create('carol')).token);
    try {
      const id = await environment(carol, 'network removed');
      const containerId = await containerOf(id);
      await docker.getContainer(containerId).stop({ t: 0 });
      await docker.getNetwork((await networkOf('carol'))).remove();
      expect(await run(carol, id, 'echo back')).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'back\n' });
      expect(Object.keys((await networksOf(containerId)).addresses)).toEqual([(await networkOf('carol'))]);
      expect((await docker.getNetwork((await networkOf('carol'))).inspect()).Labels).toMatchObject({ [LABEL_KIND]: KIND_NETWORK, [LABEL_HOME]: server.home });
    } finally {
      await carol.close();
    }
  }, 60_000);

  it('moves containers made before accounts had networks of their own (on bridge) onto them at the next start', async () => {
    const id = await environment(alice, 'made on bridge');
    const bobId = (await server.platform.services.accounts.findByLogin('bob'))!.id;
    const [webApp] = await docker.listContainers({ filters: { label: [...webAppHomeFilter(server.home).label, `${LABEL_ACCOUNT}=${bobId}`] } });
    const moveToBridge = async (container: Docker.ContainerInfo | { Id: string }, network: string) => {
      await docker.getNetwork('bridge').connect({ Container: container.Id });
      await docker.getNetwork(network).disconnect({ Container: container.Id, Force: true });
    };
    const environmentId = await containerOf(id);
    await moveToBridge({ Id: environmentId }, (await networkOf('alice')));
    await moveToBridge(webApp!, (await networkOf('bob')));
    expect(Object.keys((await networksOf(environmentId)).addresses)).toEqual(['bridge']);

    // A second Backyard on the same home, as after an upgrade and restart.
    const again = await openPlatform(server.platform.config, createLogger('silent'));
    try {
      again.services.webApps.start();
      const aliceId = (await server.platform.services.accounts.findByLogin('alice'))!.id;
      expect(await again.services.devenvs.execute(aliceId, id, 'echo moved')).toMatchObject({ status: 'exited', stdout: 'moved\n' });
      expect(Object.keys((await networksOf(environmentId)).addresses)).toEqual([(await networkOf('alice'))]);
      await expect.poll(async () => Object.keys((await networksOf(webApp!.Id)).addresses), { timeout: 15_000 }).toEqual([(await networkOf('bob'))]);
    } finally {
      again.close();
    }
  }, 60_000);
});

/**
 * Many accounts on one Docker engine (src/platform/devenvs/networks.ts, subnets.ts), against the
 * real engine: each account's network gets a subnet of BACKYARD_NETWORK_POOL, never one of the
 * engine's default pools (which hold about 30 networks); subnets that any network on the engine uses,
 * Backyard's or not, are not picked; a full pool answers ManagementError(unavailable) naming the
 * variable; an account's network goes with its last container, and its subnet serves another account.
 * Development environments are made through the platform's own service (the path MCP takes).
 *
 * Each suite works in a pool that no network on the engine touches when it starts (found with
 * `pickSubnet` itself in a range of its own), so that it neither meets nor disturbs other suites.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ManagementError } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import { LABEL_ACCOUNT, accountNetworkName, homeFilter, networkHomeFilter } from '../src/platform/devenvs/labels.js';
import { AccountNetworks } from '../src/platform/devenvs/networks.js';
import { pickSubnet, subnetCount } from '../src/platform/devenvs/subnets.js';
import { openPlatform, type Platform } from '../src/platform/platform.js';
import { cidrSize, cidrText, cidrsOverlap, parseIpv4Cidr, type Ipv4Cidr } from '../src/shared/cidr.js';
import { DEVENV_ENV, SKIP_DOCKER, containersOf, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';

/** Label of the networks this file makes by hand (not through Backyard), for its clean-up. */
const FOREIGN_LABEL = `dev.backyard.test.account-subnets=${process.pid}`;

/** Every IPv4 subnet of every network on the engine, by network name. */
async function engineSubnets(): Promise<Array<{ name: string; subnet: Ipv4Cidr }>> {
  const networks = await docker.listNetworks();
  return networks.flatMap((n) =>
    (n.IPAM?.Config ?? []).flatMap((c: { Subnet?: string }) => {
      const subnet = c.Subnet ? parseIpv4Cidr(c.Subnet, false) : undefined;
      return subnet ? [{ name: n.Name, subnet }] : [];
    }),
  );
}

/** A range of `prefix` inside `within` that no network on the engine touches now. */
async function untouchedRange(within: string, prefix: number): Promise<Ipv4Cidr> {
  const found = pickSubnet({ range: parseIpv4Cidr(within)!, subnetPrefix: prefix }, (await engineSubnets()).map((s) => s.subnet), process.pid);
  if (!found) throw new Error(`every /${prefix} of ${within} is used by a network on the engine: remove them (docker network ls) and run again`);
  return found;
}

/** The subnet of the account's network. */
async function subnetOf(home: string, accountId: string): Promise<Ipv4Cidr> {
  const info = await docker.getNetwork(accountNetworkName(home, accountId)).inspect();
  return parseIpv4Cidr(info.IPAM.Config[0].Subnet)!;
}

const inside = (subnet: Ipv4Cidr, range: Ipv4Cidr) => subnet.start >= range.start && subnet.start + cidrSize(subnet.prefix) <= range.start + cidrSize(range.prefix);

/** A platform on a new home whose account networks take their subnets from `pool`. */
async function platformWith(pool: Ipv4Cidr, subnetPrefix: number, extra: Record<string, string> = {}): Promise<{ platform: Platform; home: string }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-subnets-'));
  const env = { ...DEVENV_ENV, BACKYARD_LOG_LEVEL: 'silent', BACKYARD_NETWORK_POOL: cidrText(pool), BACKYARD_NETWORK_SUBNET_PREFIX: String(subnetPrefix), ...extra };
  const platform = await openPlatform(loadConfig({ home }, env), createLogger('silent'));
  return { platform, home };
}

async function cleanUp(home: string | undefined, platform: Platform | undefined): Promise<void> {
  if (platform) await platform.close();
  if (home) {
    // Ten at a time first (the helper goes one by one), then the helper for what is left: volumes, networks.
    const containers = await docker.listContainers({ all: true, filters: homeFilter(home) });
    for (let i = 0; i < containers.length; i += 10) {
      await Promise.all(containers.slice(i, i + 10).map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    }
    await removeDevenvs(home);
    expect(await docker.listNetworks({ filters: networkHomeFilter(home) })).toEqual([]);
    fs.rmSync(home, { recursive: true, force: true });
  }
}

describe.skipIf(SKIP_DOCKER)('a small pool', () => {
  let platform: Platform | undefined;
  let home: string | undefined;
  let pool: Ipv4Cidr;
  let foreign: Ipv4Cidr;

  beforeAll(async () => {
    await requireDocker();
    // Two /27s: one taken by a network Backyard did not make, one for Backyard's accounts.
    pool = await untouchedRange('10.203.0.0/16', 26);
    foreign = { start: pool.start + cidrSize(27), prefix: 27 };
    await docker.createNetwork({ Name: `backyard-test-foreign-${process.pid}`, Driver: 'bridge', IPAM: { Config: [{ Subnet: cidrText(foreign) }] }, Labels: Object.fromEntries([FOREIGN_LABEL.split('=')]) });
    ({ platform, home } = await platformWith(pool, 27));
  });
  afterAll(async () => {
    await cleanUp(home, platform);
    for (const n of await docker.listNetworks({ filters: { label: [FOREIGN_LABEL] } })) await docker.getNetwork(n.Id).remove();
  });

  it('says which variable to change when full, and gives the subnet of an account whose last container went to another', async () => {
    const { accounts, devenvs } = platform!.services;
    const ann = (await accounts.create('subnet-ann')).account.id;
    const ben = (await accounts.create('subnet-ben')).account.id;
    const first = await devenvs.create(ann, 'first');
    const annSubnet = await subnetOf(home!, ann);
    // The one subnet that the foreign network leaves.
    expect(annSubnet).toEqual({ start: pool.start, prefix: 27 });
    expect(cidrsOverlap(annSubnet, foreign)).toBe(false);

    // A second environment of the same account shares the network; another account finds the pool full.
    const second = await devenvs.create(ann, 'second');
    const failure = await devenvs.create(ben, 'no room').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ManagementError);
    expect(failure).toMatchObject({ kind: 'unavailable' });
    expect((failure as Error).message).toContain(`all 2 subnets of BACKYARD_NETWORK_POOL (${cidrText(pool)} in /27 subnets) are used by networks on the Docker engine`);
    expect((failure as Error).message).toMatch(/set BACKYARD_NETWORK_POOL to a larger range/);
    // Nothing is left of the refused environment: no container, no network.
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_ACCOUNT}=${ben}`] } })).toEqual([]);
    expect(await devenvs.list(ben)).toEqual([]);

    // Removing one of two environments keeps the network; removing the last gives the subnet back.
    await devenvs.remove(ann, first.id);
    expect(await subnetOf(home!, ann)).toEqual(annSubnet);
    await devenvs.remove(ann, second.id);
    expect(await docker.listNetworks({ filters: { name: [accountNetworkName(home!, ann)] } })).toEqual([]);

    const benEnvironment = await devenvs.create(ben, 'room now');
    expect(await subnetOf(home!, ben)).toEqual(annSubnet);
    expect(await devenvs.execute(ben, benEnvironment.id, 'echo up')).toMatchObject({ status: 'exited', stdout: 'up\n' });
  }, 120_000);

  it('keeps a network while a stopped container of the account is left, and a container created as its network goes starts on a new one', async () => {
    const log = createLogger('silent');
    const networks = new AccountNetworks(docker, home!, log, { range: pool, subnetPrefix: 27 });
    const { accounts, devenvs } = platform!.services;
    const ben = (await accounts.findByLogin('subnet-ben'))!.id;
    const [environment] = await devenvs.list(ben);
    const [container] = await containersOf(environment!.id);
    await docker.getContainer(container!.Id).stop({ t: 0 });
    expect(await networks.release(ben)).toBe(false);
    expect(await subnetOf(home!, ben)).toEqual({ start: pool.start, prefix: 27 });

    // What a release racing a create leaves: a created container whose network is gone before its
    // start. The start makes the network again (on a free subnet) and runs.
    await devenvs.remove(ben, environment!.id);
    const name = await networks.ensure(ben);
    const made = await docker.createContainer({ Image: DEVENV_ENV.BACKYARD_DEVENV_IMAGE, Cmd: ['sleep', '600'], Labels: { [LABEL_ACCOUNT]: ben, 'dev.backyard.home': home! }, HostConfig: { NetworkMode: name } });
    await docker.getNetwork(name).remove();
    await networks.repairing(ben, () => made.start(), { containerId: made.id });
    const info = await made.inspect();
    expect(info.State.Running).toBe(true);
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([name]);
    expect(inside(await subnetOf(home!, ben), pool)).toBe(true);
    await made.remove({ force: true });
    expect(await networks.release(ben)).toBe(true);
  }, 60_000);
});

describe.skipIf(SKIP_DOCKER)('100 accounts', () => {
  const ACCOUNTS = 100;
  let platform: Platform | undefined;
  let home: string | undefined;
  let pool: Ipv4Cidr;

  beforeAll(async () => {
    await requireDocker();
    // 128 /27s, room for the 100; more accounts than the engine's default pools hold networks.
    pool = await untouchedRange('10.204.0.0/16', 20);
    // nc gives up after 2 s: wait long enough for it to say so.
    ({ platform, home } = await platformWith(pool, 27, { BACKYARD_EXEC_WAIT_MS: '15000' }));
  });
  afterAll(() => cleanUp(home, platform), 180_000);

  it('each on a subnet of its own in the pool, none reaching another\'s container', async () => {
    const { accounts, devenvs } = platform!.services;
    const owners: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) owners.push((await accounts.create(`many-${i}`)).account.id);
    // A few at a time, as many users would: the engine is the judge of which subnet is free.
    const environments: string[] = new Array(ACCOUNTS);
    for (let i = 0; i < ACCOUNTS; i += 10) {
      await Promise.all(owners.slice(i, i + 10).map(async (owner, j) => (environments[i + j] = (await devenvs.create(owner, 'many')).id)));
    }

    // Every account network is on a subnet of the pool, no two share addresses, none in the engine's default pools.
    const subnets = await Promise.all(owners.map((owner) => subnetOf(home!, owner)));
    expect(new Set(subnets.map(cidrText)).size).toBe(ACCOUNTS);
    for (const s of subnets) expect(inside(s, pool), cidrText(s)).toBe(true);
    const others = (await engineSubnets()).filter((n) => !owners.some((o) => accountNetworkName(home!, o) === n.name));
    for (const s of subnets) for (const o of others) expect(cidrsOverlap(s, o.subnet), `${cidrText(s)} and ${o.name}`).toBe(false);
    expect(subnetCount({ range: pool, subnetPrefix: 27 })).toBeGreaterThanOrEqual(ACCOUNTS);

    // Each container listens; each tries to connect to the next account's container.
    const addressOf = async (environmentId: string) => {
      const [c] = await containersOf(environmentId);
      return Object.values((await docker.getContainer(c!.Id).inspect()).NetworkSettings.Networks)[0]!.IPAddress;
    };
    const addresses = await Promise.all(environments.map(addressOf));
    for (let i = 0; i < ACCOUNTS; i += 10) {
      await Promise.all(
        owners.slice(i, i + 10).map((owner, j) => devenvs.execute(owner, environments[i + j]!, 'nc -ll -p 8081 -e echo hello >/dev/null 2>&1 & echo listening')),
      );
    }
    const reach = async (owner: string, environmentId: string, ip: string) => {
      let result = await devenvs.execute(owner, environmentId, `nc -w 2 ${ip} 8081 </dev/null; echo "nc exit $?"`);
      // A loaded engine may take longer than execute waits (BACKYARD_EXEC_WAIT_MS): the command runs on; wait for its end.
      for (const deadline = Date.now() + 60_000; result.status === 'running' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
        result = await devenvs.inspect(owner, environmentId, result.id);
      }
      expect(result.status).toBe('exited');
      return result.stdout;
    };
    // Positive control: a second environment of the first account reaches its first (retried while nc starts).
    const neighbour = (await devenvs.create(owners[0]!, 'neighbour')).id;
    await expect.poll(() => reach(owners[0]!, neighbour, addresses[0]!), { timeout: 15_000, interval: 200 }).toBe('hello\nnc exit 0\n');
    for (let i = 0; i < ACCOUNTS; i += 20) {
      const results = await Promise.all(owners.slice(i, i + 20).map((owner, j) => reach(owner, environments[i + j]!, addresses[(i + j + 1) % ACCOUNTS]!)));
      for (const [j, stdout] of results.entries()) expect(stdout, `account ${i + j} → account ${(i + j + 1) % ACCOUNTS}`).toMatch(/^nc exit [1-9]\d*\n$/);
    }
  }, 600_000);
});

/**
 * How the Docker suites find the address at which containers reach the host: from a
 * container's own default route, never from the network's IPAM `Gateway` entry, which Docker does not
 * promise (Debian's engine 20.10 lists only `{"Subnet": "172.17.0.0/16"}` for the default bridge).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_DOCKER, docker, requireDocker } from './helpers/devenvs.js';
import { defaultGateway, hostAddressFromContainers } from './helpers/webapps.js';

/**
 * True when this machine holds `address`: a listener can be bound to it (EADDRNOTAVAIL otherwise).
 * os.networkInterfaces() is no test of that: libuv leaves out a bridge with no container attached.
 */
const holds = (address: string) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(0, address, () => server.close(() => resolve(true)));
  });

/** True when `address` lies in the IPv4 `cidr`. */
const inSubnet = (address: string, cidr: string) => {
  const [base, bits] = cidr.split('/') as [string, string];
  const n = (a: string) => a.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(address) / size) === Math.floor(n(base) / size);
};

describe('the default route in /proc/net/route', () => {
  const header = 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT';
  it('is read in the kernel\'s byte order', () => {
    const table = [header, 'eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0', 'eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0'].join('\n');
    expect(defaultGateway(table)).toBe('172.17.0.1');
  });
  it('is absent when only on-link routes exist', () => {
    expect(defaultGateway([header, 'eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0'].join('\n'))).toBeUndefined();
  });
});

describe('holding an address', () => {
  it('is told apart by binding to it', async () => {
    expect(await holds('127.0.0.1')).toBe(true);
    expect(await holds('198.51.100.123')).toBe(false); // TEST-NET-2, RFC 5737: documentation only
  });
});

describe.skipIf(SKIP_DOCKER)('the address containers reach the host at', () => {
  let created: string | undefined;
  beforeAll(() => requireDocker());
  afterAll(async () => {
    if (created) await docker.getNetwork(created).remove().catch(() => undefined);
  });

  it('on the default bridge: an address of this machine inside the bridge\'s subnet, Gateway entry or not', async () => {
    const address = await hostAddressFromContainers('bridge');
    expect(await holds(address)).toBe(true);
    const config = (await docker.getNetwork('bridge').inspect()).IPAM?.Config ?? [];
    expect(config.some((c: { Subnet?: string }) => c.Subnet && inSubnet(address, c.Subnet))).toBe(true);
    const listed = config.map((c: { Gateway?: string }) => c.Gateway).find(Boolean);
    if (listed) expect(address).toBe(listed);
  });

  it('on a network the test creates', async () => {
    created = `backyard-test-net-${process.pid}-${Date.now()}`;
    await docker.createNetwork({ Name: created, Driver: 'bridge' });
    const address = await hostAddressFromContainers(created);
    expect(await holds(address)).toBe(true);
  });
});

import dns from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressProxy } from '../src/data/cloud/egress.js';
import { createLogger } from '../src/log.js';
import { OutboundClient } from '../src/shared/outbound/client.js';
import { checkDestination } from '../src/shared/outbound/destination.js';
import { OutboundError } from '../src/shared/outbound/errors.js';
import { isLoopbackAddress, isPublicAddress } from '../src/shared/publicAddress.js';
import { LOOPBACK_IN_IPV6, startRedirector, startTrap, type Redirector, type Trap } from './helpers/outboundTargets.js';

/*
 * The one outbound client (shared/outbound/) tried from outside: where an address is public
 * (properties over every spelling of IPv4 inside IPv6), and real requests on loopback to an allowed
 * server that redirects to a trap listener that must never be reached.
 */

/** The special-purpose IPv4 blocks (RFC 6890 and its registry), restated here as the oracle. */
const PRIVATE_V4: Array<[number, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
].map(([a, p]) => [toNumber(a as string), p as number]);

function toNumber(v4: string): number {
  return v4.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}
const toText = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');
const inBlock = (n: number, [base, prefix]: [number, number]) => prefix === 0 || n >>> (32 - prefix) === base >>> (32 - prefix);
const own = new Set(Object.values(os.networkInterfaces()).flat().map((i) => i?.address));

/** Every way to write IPv4 `v4` inside IPv6 that stands for it on the wire. */
function embeddings(v4: string): string[] {
  const n = toNumber(v4);
  const hi = ((n >>> 16) & 0xffff).toString(16);
  const lo = (n & 0xffff).toString(16);
  return [
    `::ffff:${v4}`, `::ffff:${hi}:${lo}`, `0:0:0:0:0:ffff:${hi}:${lo}`, `::FFFF:${hi.toUpperCase()}:${lo.toUpperCase()}`, `[::ffff:${v4}]`,
    `::${v4}`, `::${hi}:${lo}`,
    `::ffff:0:${v4}`, `::ffff:0:${hi}:${lo}`,
    `64:ff9b::${v4}`, `64:ff9b::${hi}:${lo}`,
    `2002:${hi}:${lo}::`, `2002:${hi}:${lo}:1::1`,
  ];
}

describe('isPublicAddress', () => {
  it('refuses the forms an attacker found and the special blocks; takes public unicast', () => {
    for (const refused of ['::7f00:1', '::ffff:0:7f00:1', '::ffff:7f00:1', '::1', '::', '0.0.0.0', '0.1.2.3', '64:ff9b:1::a00:1', 'fe80::1%eth0', 'fd00::1', 'ff02::1', '2001:db8::1', '3fff::1', 'fec0::1', '100::1', '2001::1']) {
      expect(isPublicAddress(refused), refused).toBe(false);
    }
    for (const taken of ['8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) expect(isPublicAddress(taken), taken).toBe(true);
    for (const address of own) if (address) expect(isPublicAddress(address), address).toBe(false);
  });

  it('refuses any IPv4 address in a special-purpose block, written in every IPv6 embedding', () => {
    const privateV4 = fc.constantFrom(...PRIVATE_V4).chain(([base, prefix]) =>
      fc.integer({ min: 0, max: 2 ** (32 - prefix) - 1 }).map((host) => toText((base + host) >>> 0)),
    );
    fc.assert(
      fc.property(privateV4, (v4) => {
        expect(isPublicAddress(v4)).toBe(false);
        for (const form of embeddings(v4)) expect(isPublicAddress(form), form).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('takes a public IPv4 address in every embedding, and judges any IPv4 address as the blocks say', () => {
    for (const v4 of ['8.8.8.8', '1.1.1.1', '93.184.216.34']) for (const form of embeddings(v4)) expect(isPublicAddress(form), form).toBe(true);
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const expected = !PRIVATE_V4.some((block) => inBlock(toNumber(v4), block)) && !own.has(v4);
        expect(isPublicAddress(v4)).toBe(expected);
        for (const form of embeddings(v4)) expect(isPublicAddress(form), form).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('answers false, never throws, for any text that is not an address', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.ipV6().map((a) => `${a}x`), fc.ipV4Extended()), (text) => {
        expect(typeof isPublicAddress(text)).toBe('boolean');
        expect(typeof isLoopbackAddress(text)).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
    // Extended IPv4 forms (octal, hex, fewer parts) are not address literals here: a resolver would read them otherwise.
    expect(isPublicAddress('0x7f.1')).toBe(false);
    expect(isPublicAddress('2130706433')).toBe(false);
  });

  it('knows loopback in every spelling', () => {
    for (const form of [...embeddings('127.0.0.1').filter((f) => !f.startsWith('2002') && !f.startsWith('64:')), '127.1.2.3', '::1', '[::1]']) {
      expect(isLoopbackAddress(form), form).toBe(true);
    }
    expect(isLoopbackAddress('10.0.0.1')).toBe(false);
  });
});

describe('the outbound client', () => {
  let trap: Trap;
  let redirector: Redirector;
  let service: http.Server;
  let serviceUrl: string;
  const seen: Array<{ url: string; method: string; authorization?: string; body: string }> = [];
  let client: OutboundClient;

  beforeAll(async () => {
    trap = await startTrap();
    redirector = await startRedirector();
    // An allowed service of the operator's: /big answers 2 MiB, /declared says it will, /slow never answers.
    service = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url!, method: req.method!, authorization: req.headers.authorization, body });
        if (req.url === '/big') return res.writeHead(200).end(Buffer.alloc(2 << 20));
        if (req.url === '/declared') return res.writeHead(200, { 'content-length': String(10 << 20) }).end();
        if (req.url === '/slow') return;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok": true}');
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const { port } = service.address() as AddressInfo;
    serviceUrl = `http://127.0.0.1:${port}`;
    client = new OutboundClient({ allowHosts: [redirector.hostPort, `127.0.0.1:${port}`] });
  });

  afterAll(async () => {
    await client?.close();
    service?.closeAllConnections();
    await new Promise((resolve) => service?.close(resolve));
    await redirector?.close();
    await trap?.close();
  });

  const failure = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('the request went through'), (error: unknown) => error as OutboundError);

  it('refuses a redirect from an allowed host to loopback, to a private literal and to every IPv6 spelling of loopback; nothing reaches the trap', async () => {
    const targets = [trap.url, `http://localhost:${trap.port}/`, `http://app.localhost:${trap.port}/`, ...LOOPBACK_IN_IPV6.map((host) => `http://${host}:${trap.port}/`), 'http://10.255.255.1/', 'http://169.254.169.254/latest/meta-data'];
    for (const status of [301, 302, 303, 307, 308]) {
      for (const target of targets) {
        const error = await failure(client.fetch(redirector.to(target, status), { method: 'POST', body: 'secret assertion' }));
        expect(error, `${status} → ${target}`).toBeInstanceOf(OutboundError);
        expect(error.reason).toBe('refused');
        expect(error.message).toMatch(/is not a public address/);
      }
    }
    expect(trap.hits).toBe(0);
  });

  it('refuses the same addresses asked directly, and a name that resolves to loopback', async () => {
    for (const target of [trap.url, `http://localhost:${trap.port}/`, `http://sub.localhost:${trap.port}/`, ...LOOPBACK_IN_IPV6.map((host) => `http://${host}:${trap.port}/`)]) {
      expect((await failure(client.fetch(target))).reason, target).toBe('refused');
    }
    // This machine's own name, which the resolver answers with loopback or an address of this machine
    // (not refused for its spelling, as localhost is): refused for its address.
    const name = os.hostname();
    const resolves = await dns.lookup(name).then(() => true, () => false);
    const refusal = await failure(client.fetch(`http://${name}:${trap.port}/`));
    if (resolves) expect(refusal).toMatchObject({ reason: 'refused', message: expect.stringContaining(`${name} is not a public address (`) });
    await expect(checkDestination(name, trap.port)).rejects.toThrow();
    expect(trap.hits).toBe(0);
  });

  it('follows a redirect between allowed hosts, dropping credentials for another origin and the body for a 303; refuses past the bound', async () => {
    seen.length = 0;
    const followed = await client.fetch(redirector.to(`${serviceUrl}/landed`, 303), { method: 'POST', headers: { authorization: 'Bearer t' }, body: 'x' });
    expect(await followed.json()).toEqual({ ok: true });
    expect(seen).toEqual([{ url: '/landed', method: 'GET', authorization: undefined, body: '' }]);
    const kept = await client.fetch(redirector.to(`${serviceUrl}/kept`, 307), { method: 'POST', body: 'assertion' });
    expect(kept.status).toBe(200);
    expect(seen[1]).toMatchObject({ url: '/kept', method: 'POST', body: 'assertion' });

    const loop = redirector.to(redirector.to(redirector.to(redirector.to(`${serviceUrl}/never`))));
    expect(await failure(client.fetch(loop, { maxRedirects: 2 }))).toMatchObject({ reason: 'redirect', message: expect.stringMatching(/more than 2/) });
    expect(await failure(client.fetch(redirector.to(`${serviceUrl}/x`), { redirect: 'error' }))).toMatchObject({ reason: 'redirect' });
    const manual = await client.fetch(redirector.to(`${serviceUrl}/x`, 308), { redirect: 'manual' });
    expect(manual.status).toBe(308);
    expect(seen.some((s) => s.url === '/never' || s.url === '/x')).toBe(false);
  });

  it('bounds the body, a declared length and the time of the whole exchange', async () => {
    const big = await client.fetch(`${serviceUrl}/big`, { maxBytes: 1 << 20 });
    await expect(big.text()).rejects.toMatchObject({ reason: 'too-large' });
    expect(await failure(client.fetch(`${serviceUrl}/declared`, { maxBytes: 1 << 20 }))).toMatchObject({ reason: 'too-large' });
    expect(await failure(client.fetch(`${serviceUrl}/slow`, { timeoutMs: 300 }))).toMatchObject({ reason: 'timeout', message: expect.stringMatching(/within 300 ms/) });
  });

  it('refuses schemes other than http and https, and says what it could not reach', async () => {
    expect(await failure(client.fetch('file:///etc/passwd'))).toMatchObject({ reason: 'refused' });
    const closed = await startTrap();
    await closed.close();
    const open = new OutboundClient({ allowHosts: [`127.0.0.1:${closed.port}`] });
    try {
      expect(await failure(open.fetch(closed.url))).toMatchObject({ reason: 'unreachable', message: expect.stringMatching(/ECONNREFUSED/) });
    } finally {
      await open.close();
    }
  });
});

describe("cloud code's egress proxy", () => {
  let trap: Trap;
  let allowed: Trap;
  let proxy: http.Server;
  let proxyPort: number;

  beforeAll(async () => {
    trap = await startTrap();
    allowed = await startTrap();
    proxy = createEgressProxy({ allow: [`127.0.0.1:${allowed.port}`], log: createLogger('silent') });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as AddressInfo).port;
  });

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await trap?.close();
    await allowed?.close();
  });

  /** The proxy's answer to `CONNECT target`: its status line and text. */
  const connect = (target: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port: proxyPort, method: 'CONNECT', path: target });
      // Node answers every reply to CONNECT as 'connect'; a refusal's text follows on the socket.
      request.on('connect', (response, socket, head) => {
        let text = head.toString();
        if (response.statusCode === 200) {
          socket.destroy();
          return resolve({ status: 200, text });
        }
        socket.on('data', (c: Buffer) => (text += c.toString()));
        socket.on('close', () => resolve({ status: response.statusCode!, text }));
      });
      request.on('error', reject);
      request.end();
    });

  it('opens no tunnel to loopback in any spelling, nor to localhost names; opens one to an allowed host:port', async () => {
    for (const host of ['127.0.0.1', 'localhost', 'app.localhost', ...LOOPBACK_IN_IPV6]) {
      const answer = await connect(`${host}:${trap.port}`);
      expect(answer.status, host).toBe(403);
      expect(answer.text).toMatch(/is not a public internet address/);
    }
    expect(trap.hits).toBe(0);
    expect((await connect(`127.0.0.1:${allowed.port}`)).status).toBe(200);
  });
});

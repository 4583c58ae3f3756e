/**
 * Carving account networks' subnets out of BACKYARD_NETWORK_POOL (src/platform/devenvs/subnets.ts)
 * and reading CIDR text (src/shared/cidr.ts): properties checked with fast-check against a
 * brute-force oracle that looks at every subnet of the pool.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cidrSize, cidrText, cidrsOverlap, ipv4Text, parseIpv4Cidr, type Ipv4Cidr } from '../src/shared/cidr.js';
import { pickSubnet, subnetCount, type AddressPool } from '../src/platform/devenvs/subnets.js';

const address = fc.integer({ min: 0, max: 2 ** 32 - 1 });
/** Any aligned IPv4 range. */
const cidr = (minPrefix = 0, maxPrefix = 32) =>
  fc.tuple(address, fc.integer({ min: minPrefix, max: maxPrefix })).map(([a, prefix]): Ipv4Cidr => ({ start: a - (a % cidrSize(prefix)), prefix }));
/** A pool of at most 512 subnets, so that the oracle can look at each. */
const pool: fc.Arbitrary<AddressPool> = fc
  .tuple(cidr(8, 29), fc.integer({ min: 0, max: 9 }))
  .map(([range, extra]) => ({ range, subnetPrefix: Math.min(range.prefix + extra, 29) }))
  .filter((p) => p.subnetPrefix >= p.range.prefix);
/** Taken ranges: anywhere, or inside or around the pool (of any size), so that the pool fills up often. */
const takenFor = (p: AddressPool) =>
  fc.array(
    fc.oneof(
      cidr(),
      fc.tuple(fc.integer({ min: 0, max: cidrSize(p.range.prefix) - 1 }), fc.integer({ min: Math.max(p.range.prefix - 2, 0), max: 32 })).map(([offset, prefix]): Ipv4Cidr => {
        const a = p.range.start + offset;
        return { start: a - (a % cidrSize(prefix)), prefix };
      }),
    ),
    { maxLength: 40 },
  );

/** Every subnet of the pool, in address order. */
const allSubnets = (p: AddressPool): Ipv4Cidr[] => Array.from({ length: subnetCount(p) }, (_, i) => ({ start: p.range.start + i * cidrSize(p.subnetPrefix), prefix: p.subnetPrefix }));

describe('parseIpv4Cidr', () => {
  it('reads back what cidrText writes', () => {
    fc.assert(fc.property(cidr(), (c) => {
      expect(parseIpv4Cidr(cidrText(c))).toEqual(c);
    }));
  });
  it('refuses a range with host bits set unless asked to round down, then gives the range that holds the address', () => {
    fc.assert(
      fc.property(address, fc.integer({ min: 0, max: 32 }), (a, prefix) => {
        const text = `${ipv4Text(a)}/${prefix}`;
        const aligned = a % cidrSize(prefix) === 0;
        expect(parseIpv4Cidr(text) !== undefined).toBe(aligned);
        const loose = parseIpv4Cidr(text, false)!;
        expect(loose.prefix).toBe(prefix);
        expect(loose.start <= a && a < loose.start + cidrSize(prefix)).toBe(true);
      }),
    );
  });
  it('refuses anything that is not dotted quad and prefix', () => {
    for (const bad of ['', '10.0.0.0', '10.0.0.0/', '10.0.0.0/33', '10.0.0.0/08', '10.0.0/8', '10.0.0.256/32', '010.0.0.0/8', ' 10.0.0.0/8', '10.0.0.0/8 ', 'fd00::/8', '10.0.0.0/-1', '10.0.0.0/+8']) {
      expect(parseIpv4Cidr(bad, false), bad).toBeUndefined();
    }
    fc.assert(fc.property(fc.string(), (text) => {
      const parsed = parseIpv4Cidr(text, false);
      if (parsed) expect(text).toMatch(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/);
    }));
  });
  it('writes addresses of 128.0.0.0 and above without going negative', () => {
    expect(ipv4Text(2 ** 32 - 1)).toBe('255.255.255.255');
    expect(parseIpv4Cidr('192.168.0.0/16')).toEqual({ start: 192 * 2 ** 24 + 168 * 2 ** 16, prefix: 16 });
  });
});

describe('pickSubnet', () => {
  it('picks a subnet of the pool that overlaps nothing taken, and none exactly when every subnet overlaps something', () => {
    fc.assert(
      fc.property(
        pool.chain((p) => fc.tuple(fc.constant(p), takenFor(p), fc.nat())),
        ([p, taken, from]) => {
          const free = allSubnets(p).filter((s) => !taken.some((t) => cidrsOverlap(s, t)));
          const picked = pickSubnet(p, taken, from);
          if (free.length === 0) {
            expect(picked).toBeUndefined();
            return;
          }
          expect(picked).toBeDefined();
          expect(picked!.prefix).toBe(p.subnetPrefix);
          expect(free).toContainEqual(picked);
          // The first free one at `from` or after, else the first of all.
          const start = from % subnetCount(p);
          const expected = free.find((s) => s.start >= p.range.start + start * cidrSize(p.subnetPrefix)) ?? free[0];
          expect(picked).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('picked one after another, the subnets never overlap each other, and the last pick reports exhaustion', () => {
    fc.assert(
      fc.property(
        pool.filter((p) => subnetCount(p) <= 64).chain((p) => fc.tuple(fc.constant(p), takenFor(p), fc.array(fc.nat(), { minLength: 65, maxLength: 65 }))),
        ([p, taken, starts]) => {
          const picked: Ipv4Cidr[] = [];
          const free = allSubnets(p).filter((s) => !taken.some((t) => cidrsOverlap(s, t))).length;
          for (const from of starts) {
            const next = pickSubnet(p, [...taken, ...picked], from);
            if (!next) break;
            expect(cidrsOverlap(next, p.range) && next.start >= p.range.start && next.start + cidrSize(next.prefix) <= p.range.start + cidrSize(p.range.prefix)).toBe(true);
            for (const other of [...taken, ...picked]) expect(cidrsOverlap(next, other)).toBe(false);
            picked.push(next);
          }
          // Exhaustion is reported exactly when every free subnet was handed out.
          expect(picked).toHaveLength(free);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fits 1,000 accounts in the default pool', () => {
    const p: AddressPool = { range: parseIpv4Cidr('10.201.0.0/16')!, subnetPrefix: 27 };
    const picked: Ipv4Cidr[] = [];
    for (let i = 0; i < 1000; i++) picked.push(pickSubnet(p, picked, i * 7919)!);
    expect(new Set(picked.map(cidrText)).size).toBe(1000);
    expect(subnetCount(p)).toBe(2048);
  });
});

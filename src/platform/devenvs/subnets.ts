import { cidrSize, cidrText, type Ipv4Cidr } from '../../shared/cidr.js';

/**
 * Where the subnets of account networks come from (Config: BACKYARD_NETWORK_POOL,
 * BACKYARD_NETWORK_SUBNET_PREFIX): `range` cut into aligned subnets of `subnetPrefix`, one per
 * account. `subnetPrefix` is at least `range.prefix` (config.ts checks it).
 */
export interface AddressPool {
  range: Ipv4Cidr;
  subnetPrefix: number;
}

/** How many subnets the pool holds. */
export const subnetCount = (pool: AddressPool): number => 2 ** (pool.subnetPrefix - pool.range.prefix);

/** The pool as people read it: "10.201.0.0/16 in /27 subnets". */
export const poolText = (pool: AddressPool): string => `${cidrText(pool.range)} in /${pool.subnetPrefix} subnets`;

/**
 * A subnet of `pool` that overlaps none of `taken` (the subnets of every network on the engine, of
 * any size, inside the pool or not): the first free one at index `from` or after (the pool's subnets
 * counted from 0 in address order), else the first free one before `from`. Callers start at a random
 * index so that two processes picking at once seldom pick the same one (the engine refuses the second
 * create then, and the loser picks again).
 *
 * Runs in O(t log t) for t taken ranges, whatever the pool's size: the taken ranges become intervals of
 * subnet indexes, merged, and the answer is read off their gaps.
 * @param from an index in [0, subnetCount(pool)); other values are brought into it.
 * @returns the subnet, or undefined when every subnet of the pool overlaps a taken range.
 */
export function pickSubnet(pool: AddressPool, taken: Ipv4Cidr[], from = 0): Ipv4Cidr | undefined {
  const count = subnetCount(pool);
  const size = cidrSize(pool.subnetPrefix);
  const base = pool.range.start;
  // Each taken range as the half-open interval [lo, hi) of the subnet indexes it touches.
  const blocked = taken
    .map((t) => ({ lo: Math.floor((t.start - base) / size), hi: Math.ceil((t.start + cidrSize(t.prefix) - base) / size) }))
    .map(({ lo, hi }) => ({ lo: Math.max(lo, 0), hi: Math.min(hi, count) }))
    .filter(({ lo, hi }) => lo < hi)
    .sort((a, b) => a.lo - b.lo);
  const merged: Array<{ lo: number; hi: number }> = [];
  for (const b of blocked) {
    const last = merged[merged.length - 1];
    if (last && b.lo <= last.hi) last.hi = Math.max(last.hi, b.hi);
    else merged.push({ ...b });
  }
  const freeFrom = (index: number): number | undefined => {
    let at = index;
    for (const m of merged) {
      if (m.hi <= at) continue;
      if (m.lo > at) break;
      at = m.hi;
    }
    return at < count ? at : undefined;
  };
  const start = ((Math.floor(from) % count) + count) % count;
  const index = freeFrom(start) ?? freeFrom(0);
  return index === undefined ? undefined : { start: base + index * size, prefix: pool.subnetPrefix };
}

/** The gateway of a subnet: its first address after the network address (what the engine would choose). */
export const gatewayOf = (subnet: Ipv4Cidr): number => subnet.start + 1;

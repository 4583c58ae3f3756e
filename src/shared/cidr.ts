import net from 'node:net';

/**
 * An IPv4 range in CIDR notation, as numbers: `start` is the first address as an unsigned 32-bit
 * number (10.201.0.0 → 180944896), `prefix` the prefix length (0–32). The range holds
 * `2 ** (32 - prefix)` addresses from `start`. Plain arithmetic, never bitwise operators (those are
 * signed 32-bit in JavaScript and turn 128.0.0.0 and above negative).
 */
export interface Ipv4Cidr {
  start: number;
  prefix: number;
}

/** How many addresses a range of `prefix` holds. */
export const cidrSize = (prefix: number): number => 2 ** (32 - prefix);

/** The dotted quad of an unsigned 32-bit address (180944896 → "10.201.0.0"). */
export function ipv4Text(address: number): string {
  return [2 ** 24, 2 ** 16, 2 ** 8, 1].map((unit) => Math.floor(address / unit) % 256).join('.');
}

/** "a.b.c.d/n" of a range. */
export const cidrText = (cidr: Ipv4Cidr): string => `${ipv4Text(cidr.start)}/${cidr.prefix}`;

/**
 * Reads an IPv4 range such as "10.201.0.0/16" (address as `net.isIPv4` accepts it: four decimal
 * parts 0–255, no leading zeros; prefix 0–32 in decimal, no sign or leading zero). With `aligned`
 * (the default), the address must be the range's first (no host bits set: "10.201.5.0/16" is refused,
 * as the engine's IPAM refuses such a subnet); without, the range is the one that holds the address
 * (what `docker network inspect` may list as a subnet written with host bits).
 * @returns the range, or undefined when the text is not one (IPv6 included).
 */
export function parseIpv4Cidr(text: string, aligned = true): Ipv4Cidr | undefined {
  const match = /^([0-9.]+)\/(0|[1-9][0-9]?)$/.exec(text);
  if (!match || !net.isIPv4(match[1]!)) return undefined;
  const prefix = Number(match[2]);
  if (prefix > 32) return undefined;
  const address = match[1]!.split('.').reduce((n, part) => n * 256 + Number(part), 0);
  const start = address - (address % cidrSize(prefix));
  if (aligned && start !== address) return undefined;
  return { start, prefix };
}

/** True when two ranges share an address. */
export const cidrsOverlap = (a: Ipv4Cidr, b: Ipv4Cidr): boolean => a.start < b.start + cidrSize(b.prefix) && b.start < a.start + cidrSize(a.prefix);

import net from 'node:net';
import os from 'node:os';

/**
 * Which addresses are the public internet, for every connection Backyard makes on behalf of someone
 * else's code or configuration (shared/outbound/): loopback, private, link-local, shared (CGNAT),
 * multicast, reserved and documentation ranges (RFC 6890's special-purpose registries, RFC 9637),
 * IPv6 outside global unicast (`2000::/3`, RFC 4291 §2.4), and every address of this machine's
 * interfaces are not.
 *
 * The decision is made on the address's bytes, never on its text: an IPv4 address written inside
 * an IPv6 one (mapped `::ffff:a.b.c.d` and `::ffff:7f00:1`, compatible `::a.b.c.d`, translated
 * `::ffff:0:a.b.c.d` of RFC 2765, NAT64 `64:ff9b::/96` of RFC 6052, 6to4 `2002::/16` of RFC 3056)
 * is judged as that IPv4 address, however it is spelled.
 */

const SPECIAL_V4 = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL_V4.addSubnet(address, prefix, 'ipv4');

/** Special-purpose blocks inside global unicast `2000::/3` (RFC 6890 §2.2.3; RFC 9637 for `3fff::/20`). */
const SPECIAL_V6 = new net.BlockList();
for (const [address, prefix] of [['2001::', 23], ['2001:db8::', 32], ['3fff::', 20]] as const) SPECIAL_V6.addSubnet(address, prefix, 'ipv6');

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
type Bytes = Uint8Array;

const ipv4Bytes = (text: string): Bytes => Uint8Array.from(text.split('.').map(Number));

/** The 16 bytes of an IPv6 address that `net.isIPv6` accepted (a zone such as `%eth0` is dropped). */
function ipv6Bytes(text: string): Bytes {
  let s = text.split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const all = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/** The bytes of an address literal (IPv6 possibly in brackets), or undefined for anything else. */
export function addressBytes(address: string): Bytes | undefined {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (net.isIPv4(literal)) return ipv4Bytes(literal);
  if (net.isIPv6(literal)) return ipv6Bytes(literal);
  return undefined;
}

const zero = (bytes: Bytes, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);

/**
 * The IPv4 address an IPv6 address is on this host's own IPv4 stack: IPv4-mapped `::ffff:0:0/96`
 * and IPv4-compatible `::/96` (RFC 4291 §2.5.5; `::` and `::1` come out as 0.0.0.0 and 0.0.0.1,
 * both refused), IPv4-translated `::ffff:0:0:0/96` (RFC 2765 §2.1).
 */
function hostIpv4(v6: Bytes): Bytes | undefined {
  if (zero(v6, 0, 10) && v6[10] === 0xff && v6[11] === 0xff) return v6.subarray(12);
  if (zero(v6, 0, 12)) return v6.subarray(12);
  if (zero(v6, 0, 8) && v6[8] === 0xff && v6[9] === 0xff && zero(v6, 10, 12)) return v6.subarray(12);
  return undefined;
}

/**
 * The IPv4 address an IPv6 address stands for on the wire: `hostIpv4`'s, or the one a relay
 * reaches for it, through the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052 §2.1) or 6to4
 * `2002::/16` (RFC 3056 §2, bits 16 to 47).
 */
function embeddedIpv4(v6: Bytes): Bytes | undefined {
  const own = hostIpv4(v6);
  if (own) return own;
  if (v6[0] === 0x00 && v6[1] === 0x64 && v6[2] === 0xff && v6[3] === 0x9b && zero(v6, 4, 12)) return v6.subarray(12);
  if (v6[0] === 0x20 && v6[1] === 0x02) return v6.subarray(2, 6);
  return undefined;
}

const v4Text = (bytes: Bytes) => Array.from(bytes).join('.');
const v6Text = (bytes: Bytes) => Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16)).join(':');

/** The address as the one text every spelling of it comes to: IPv4 dotted, or eight hex groups. */
function canonical(bytes: Bytes): string {
  if (bytes.length === 4) return v4Text(bytes);
  const v4 = embeddedIpv4(bytes);
  return v4 ? v4Text(v4) : v6Text(bytes);
}

/** This machine's addresses, read each time: interfaces come and go (Docker bridges). */
function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const i of Object.values(os.networkInterfaces()).flat()) {
    const bytes = i && addressBytes(i.address);
    if (bytes) own.add(canonical(bytes));
  }
  return own;
}

function isPublicBytes(bytes: Bytes): boolean {
  if (bytes.length === 16) {
    const v4 = embeddedIpv4(bytes);
    if (v4) return isPublicBytes(v4);
    if ((bytes[0]! & 0xe0) !== 0x20 || SPECIAL_V6.check(v6Text(bytes), 'ipv6')) return false;
  } else if (SPECIAL_V4.check(v4Text(bytes), 'ipv4')) return false;
  return !ownAddresses().has(canonical(bytes));
}

/**
 * True when `address` (an IP literal, IPv6 with or without brackets) is a public unicast address
 * that is not this machine's own. Anything that is not an address literal is false; never throws.
 */
export function isPublicAddress(address: string): boolean {
  const bytes = addressBytes(address);
  return bytes !== undefined && isPublicBytes(bytes);
}

/**
 * True when `address` is this host's loopback: `127.0.0.0/8`, `::1`, or `127.0.0.0/8` mapped,
 * compatible or translated into IPv6 (`hostIpv4`). NAT64 and 6to4 forms of 127.0.0.1 are not: they
 * lead to a relay (and are not public either).
 */
export function isLoopbackAddress(address: string): boolean {
  const bytes = addressBytes(address);
  if (!bytes) return false;
  if (bytes.length === 16 && zero(bytes, 0, 15) && bytes[15] === 1) return true;
  const v4 = bytes.length === 4 ? bytes : hostIpv4(bytes);
  return v4 !== undefined && v4[0] === 127;
}

import net from 'node:net';
import os from 'node:os';

/**
 * Which addresses are the public internet, for every request Backyard makes on behalf of someone
 * else's code or configuration (cloud code's egress proxy, an app's sign-in provider, a webhook):
 * loopback, private, link-local, shared (CGNAT), multicast, reserved and documentation ranges
 * (RFC 6890's special-purpose registries), IPv4-mapped forms of those, and every address of this
 * machine's interfaces are not.
 */

const SPECIAL_PURPOSE = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL_PURPOSE.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) SPECIAL_PURPOSE.addSubnet(address, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`), else undefined. */
const mappedIpv4 = (address: string): string | undefined => /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];

/**
 * True when `address` (an IP literal) is a public unicast address that is not this machine's own.
 * The machine's addresses are read each time: interfaces come and go (Docker bridges).
 */
export function isPublicAddress(address: string): boolean {
  const v4 = mappedIpv4(address);
  if (v4) return isPublicAddress(v4);
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : undefined;
  if (!family || SPECIAL_PURPOSE.check(address, family)) return false;
  const own = Object.values(os.networkInterfaces()).flat();
  return !own.some((i) => i && i.address.toLowerCase() === address.toLowerCase());
}

import dns from 'node:dns/promises';
import net from 'node:net';
import { isLoopbackAddress, isPublicAddress } from '../publicAddress.js';

/** Where an outbound connection may lead. */
export interface OutboundPolicy {
  /**
   * `host:port` pairs (lower case, IPv6 in brackets: `hostPort` writes them) reached whatever
   * their address: the operator's `BACKYARD_CLOUD_ALLOW_HOSTS`.
   */
  allowHosts?: readonly string[];
  /** Whether loopback addresses are accepted besides public ones (read per connection). */
  allowLoopback?: () => boolean;
}

/** A connection refused for where it leads; its message names the host and the addresses it resolved to. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  readonly code = 'ENOTPUBLIC';
  constructor(
    readonly host: string,
    readonly addresses: readonly string[],
  ) {
    super(`${host} is not a public address${addresses.length && addresses.join() !== host ? ` (${addresses.join(', ')})` : ''}`);
  }
}

/** A checked address to connect to, as `dns.lookup` answers it. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/** The ports a URL means without one (RFC 9110 §4.2; RFC 8314 §3.3 for submission over TLS). */
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'smtp:': 587, 'smtps:': 465 };

/** The port of a URL, its scheme's when none is written. */
export const portOf = (url: URL): number => Number(url.port) || DEFAULT_PORTS[url.protocol] || 0;

/** The `host:port` of a host and port as an allow list writes it (lower case, IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  const bare = unbracket(host).toLowerCase();
  return `${net.isIPv6(bare) ? `[${bare}]` : bare}:${port}`;
}

const unbracket = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/** `localhost` and names under it are loopback whatever a resolver says (RFC 6761 §6.3). */
const isLocalhostName = (name: string) => /(^|\.)localhost\.?$/i.test(name);

/**
 * Resolves `host` once and checks every address it resolves to: all must be public
 * (`isPublicAddress`), or loopback where `policy.allowLoopback()` says so, unless `host:port` is in
 * `policy.allowHosts` (then the first address is taken as it is). The caller connects to the address
 * returned, never to the name, so DNS cannot answer differently between the check and the
 * connection (DNS rebinding).
 * @param host a name or an address literal (IPv6 with or without brackets).
 * @throws OutboundRefused when an address is not allowed; the resolver's error (`ENOTFOUND`, …) when
 *   the name does not resolve.
 */
export async function checkDestination(host: string, port: number, policy: OutboundPolicy = {}): Promise<CheckedAddress> {
  const name = unbracket(host);
  const allowed = (policy.allowHosts ?? []).some((a) => a.toLowerCase() === hostPort(name, port));
  let addresses: CheckedAddress[];
  if (net.isIP(name)) addresses = [{ address: name, family: net.isIPv4(name) ? 4 : 6 }];
  else if (!allowed && isLocalhostName(name) && !policy.allowLoopback?.()) throw new OutboundRefused(name, []);
  else addresses = (await dns.lookup(name, { all: true, verbatim: true })) as CheckedAddress[];
  if (addresses.length === 0) throw new OutboundRefused(name, []);
  if (allowed) return addresses[0]!;
  const loopback = policy.allowLoopback?.() ?? false;
  const refused = addresses.filter((a) => !isPublicAddress(a.address) && !(loopback && isLoopbackAddress(a.address)));
  if (refused.length > 0) throw new OutboundRefused(name, refused.map((a) => a.address));
  return addresses[0]!;
}

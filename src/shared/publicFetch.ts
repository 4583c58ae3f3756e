import dns from 'node:dns';
import net from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { isPublicAddress } from './publicAddress.js';

/**
 * A `lookup` for undici's connector that answers only public addresses: a name that resolves to a
 * private, link-local, loopback or this machine's own address fails the connection. Checking the
 * address the socket really connects to (not a lookup made before the request) leaves no window for
 * DNS rebinding.
 */
export function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const denied = Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'no address'}, which is not a public address`), { code: 'ENOTPUBLIC' });
      return callback(denied, '');
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

const publicAgent = new Agent({ connect: { lookup: publicOnlyLookup } });

/** The `host:port` of a URL as an allow list writes it (lower case, IPv6 in brackets, the scheme's port when none is given). */
export const hostPort = (url: URL): string => `${url.hostname.toLowerCase()}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;

/**
 * `fetch` for URLs that someone other than the operator chose (an app's sign-in provider endpoints,
 * a webhook, a client's metadata document): the host must resolve to public addresses only, so that
 * nobody can make Backyard request its own network (SSRF); the exact `host:port` pairs of `allow`
 * (the operator's `BACKYARD_CLOUD_ALLOW_HOSTS`) are fetched whatever their address. A refused host
 * fails like an unreachable one (a TypeError "fetch failed" whose cause says why).
 * @param allow `host:port` pairs, as `hostPort` writes them.
 */
export function publicFetch(allow: readonly string[] = []): typeof fetch {
  const allowed = new Set(allow.map((a) => a.toLowerCase()));
  return (input, init) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (allowed.has(hostPort(url))) return fetch(input, init);
    // An address literal is connected to without a lookup, so it is checked here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(literal) && !isPublicAddress(literal)) {
      return Promise.reject(new TypeError(`fetch failed: ${literal} is not a public address`));
    }
    return undiciFetch(url, { ...(init as object), dispatcher: publicAgent }) as unknown as Promise<Response>;
  };
}

/**
 * Refuses, before a connection made outside `fetch` (HTTP/2 to APNs), a URL whose host is an
 * address literal that is not public and not allowed; a name is checked as it is resolved, by
 * giving `publicOnlyLookup` to the connection (see `connectOptions`).
 * @throws Error "<address> is not a public address".
 */
export function connectOptions(url: URL, allow: readonly string[] = []): { lookup?: typeof publicOnlyLookup } {
  if (allow.map((a) => a.toLowerCase()).includes(hostPort(url))) return {};
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(literal) && !isPublicAddress(literal)) throw new Error(`${literal} is not a public address`);
  return { lookup: publicOnlyLookup };
}

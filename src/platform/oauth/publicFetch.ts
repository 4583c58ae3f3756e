import dns from 'node:dns';
import net from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { isPublicAddress } from '../../data/cloud/egress.js';
import { isLoopbackHost } from './uris.js';

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

/**
 * `fetch` for URLs a client names (Client ID Metadata Documents): a loopback URL is fetched as it
 * is (a client on this machine, which `metadataDocumentIdProblem` allows only over http on loopback);
 * any other host must resolve to public addresses only, so that a client cannot make Backyard
 * request its own network (SSRF). A refused host fails like an unreachable one.
 */
export const publicFetch: typeof fetch = (input, init) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (isLoopbackHost(url.hostname)) return fetch(input, init);
  // An address literal is connected to without a lookup, so it is checked here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(literal) && !isPublicAddress(literal)) return Promise.reject(new TypeError(`fetch failed: ${literal} is not a public address`));
  return undiciFetch(url, { ...(init as object), dispatcher: publicAgent }) as unknown as Promise<Response>;
};

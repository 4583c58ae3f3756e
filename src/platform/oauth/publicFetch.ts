import { publicFetch as fetchPublicOnly } from '../../shared/publicFetch.js';
import { isLoopbackHost } from './uris.js';

const publicOnly = fetchPublicOnly();

/**
 * `fetch` for URLs a client names (Client ID Metadata Documents): a loopback URL is fetched as it
 * is (a client on this machine, which `metadataDocumentIdProblem` allows only over http on loopback);
 * any other host must resolve to public addresses only (shared/publicFetch.ts), so that a client
 * cannot make Backyard request its own network (SSRF). A refused host fails like an unreachable one.
 */
export const publicFetch: typeof fetch = (input, init) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (isLoopbackHost(url.hostname)) return fetch(input, init);
  return publicOnly(input, init);
};

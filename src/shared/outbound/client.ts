import net from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { boundedBody } from './body.js';
import { checkDestination, OutboundRefused, portOf, type CheckedAddress, type OutboundPolicy } from './destination.js';
import { OutboundError } from './errors.js';

/** What a request may carry, as `fetch`'s `RequestInit` narrowed to bodies that can be sent again after a 307/308. */
export interface OutboundInit {
  method?: string;
  headers?: HeadersInit;
  body?: string | Uint8Array | URLSearchParams;
  /**
   * `follow` (the default): redirects are followed by hand, each hop's address checked as the
   * first's, at most `maxRedirects` of them; `error`: a redirect fails the request; `manual`: a
   * redirect is answered as it is.
   */
  redirect?: 'follow' | 'error' | 'manual';
  /** With `follow`: how many redirects are followed (default 3). */
  maxRedirects?: number;
  /** The whole exchange, every hop and the body, in milliseconds (default 15 000). */
  timeoutMs?: number;
  /** The largest body read, in bytes (default 1 MiB): a larger one fails while it is read. */
  maxBytes?: number;
  /** Ends the exchange early; its reason is what the request rejects with. */
  signal?: AbortSignal;
}

/** `fetch` for URLs someone other than the operator chose: see `OutboundClient`. */
export type OutboundFetch = (url: string | URL, init?: OutboundInit) => Promise<Response>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);
/** Headers not sent on to another origin (the Fetch standard's "HTTP-redirect fetch", step 13). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
/** Headers of a body dropped when a redirect turns a request into a GET (Fetch, "HTTP-redirect fetch", step 12). */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/**
 * The one HTTP client for URLs that someone other than the operator chose (docs/design.md, "Security
 * stance"): webhooks, sign-in providers and their key sets, push services, client metadata
 * documents. Every connection, of the first request and of every redirect hop, goes through a
 * connector that resolves the host once, checks every address (`checkDestination`: public only,
 * unless the operator's allow list names the `host:port`) and connects to the address it checked,
 * so DNS cannot change the answer in between. Redirects are followed by hand within a bound, the
 * whole exchange within a time, and the body within a size. The HTTP itself is undici's.
 */
export class OutboundClient {
  private readonly agent: Agent;

  constructor(private readonly policy: OutboundPolicy = {}) {
    const connect = buildConnector({});
    this.agent = new Agent({
      connect: (options, callback) => {
        const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
        checkDestination(options.hostname, port, this.policy).then(
          ({ address }) => connect({ ...options, hostname: address, servername: options.servername || (net.isIP(options.hostname) ? undefined : options.hostname) }, callback),
          (error: Error) => callback(error, null),
        );
      },
    });
  }

  /**
   * The checked address to connect to for `url`, for a connection made outside `fetch` (HTTP/2 to
   * APNs): connect to it, with the URL's host as the TLS server name.
   * @throws OutboundRefused (not a public address, not allowed); the resolver's error.
   */
  resolve(url: URL): Promise<CheckedAddress> {
    return checkDestination(url.hostname, portOf(url), this.policy);
  }

  /**
   * Requests `url` (http or https only).
   * @returns the last response; its body fails with OutboundError `too-large` past `maxBytes`, or
   *   `timeout` past `timeoutMs`.
   * @throws OutboundError: `refused` (an address not public and not allowed, on any hop; another
   *   scheme), `unreachable`, `timeout`, `redirect` (with `error`, too many, or from https to http),
   *   `too-large` (a declared length past `maxBytes`); the reason of `signal` when it aborts.
   */
  fetch: OutboundFetch = async (input, init = {}) => {
    const timeoutMs = init.timeoutMs ?? 15_000;
    const maxBytes = init.maxBytes ?? 1 << 20;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const mode = init.redirect ?? 'follow';
    const maxRedirects = mode === 'follow' ? (init.maxRedirects ?? 3) : 0;
    const headers = new Headers(init.headers);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    let url = new URL(input);
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('refused', `${url.protocol} URLs are not fetched, only http and https`);
      let response: Response;
      try {
        response = (await undiciFetch(url, { method, headers: [...headers], body, redirect: 'manual', signal, dispatcher: this.agent })) as unknown as Response;
      } catch (error) {
        throw failure(error, url, init.signal, timeout, timeoutMs);
      }
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || mode === 'manual' || location === null) {
        return answer(response, url, maxBytes, init.signal, timeout, timeoutMs);
      }
      await response.body?.cancel().catch(() => undefined);
      if (mode === 'error') throw new OutboundError('redirect', `${url.origin} answered with a redirect (HTTP ${response.status}), which is not followed`);
      if (hop >= maxRedirects) throw new OutboundError('redirect', `${url.origin} redirected more than ${maxRedirects} times`);
      const next = new URL(location, url);
      if (url.protocol === 'https:' && next.protocol !== 'https:') throw new OutboundError('redirect', `${url.origin} redirected from https to ${next.protocol}, which is not followed`);
      if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      if ((response.status === 303 && method !== 'HEAD') || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        for (const name of BODY_HEADERS) headers.delete(name);
      }
      url = next;
    }
  };

  /** Ends every connection, those of requests under way too (they fail). */
  close(): Promise<void> {
    return this.agent.destroy();
  }
}

/** What a failed request rejects with: the caller's own abort as it is, anything else as an OutboundError. */
function failure(error: unknown, url: URL, own: AbortSignal | undefined, timeout: AbortSignal, timeoutMs: number): unknown {
  if (own?.aborted) return own.reason;
  if (timeout.aborted) return new OutboundError('timeout', `${url.origin} did not answer within ${timeoutMs} ms`, { cause: error });
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof OutboundRefused) return new OutboundError('refused', cause.message, { cause });
  const code = (cause as { code?: unknown } | undefined)?.code;
  return new OutboundError('unreachable', `the connection to ${url.origin} failed (${typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause)})`, { cause });
}

/** The response with its body bounded in size and time, or the failure of a declared length past `maxBytes`. */
async function answer(response: Response, url: URL, maxBytes: number, own: AbortSignal | undefined, timeout: AbortSignal, timeoutMs: number): Promise<Response> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new OutboundError('too-large', `${url.origin} answered more than ${maxBytes} bytes`);
  }
  const body =
    response.body && !NULL_BODY.has(response.status)
      ? boundedBody(response.body, maxBytes, (error) => {
          if (error === 'too-large') return new OutboundError('too-large', `${url.origin} answered more than ${maxBytes} bytes`);
          const stopped = failure(error, url, own, timeout, timeoutMs);
          return stopped instanceof OutboundError && stopped.reason === 'unreachable' ? new OutboundError('unreachable', `${url.origin} stopped answering mid-body`, { cause: error }) : stopped;
        })
      : null;
  return new Response(body, { status: response.status, statusText: response.statusText, headers: [...response.headers] });
}

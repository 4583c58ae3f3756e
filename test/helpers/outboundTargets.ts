import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Servers on loopback for trying Backyard's outbound client from outside: a trap (a service inside
 * the machine that no outbound request may reach: it counts what reaches it) and a redirector (a
 * service the operator allows, which answers every request with a redirect to where it is told).
 */
export interface Trap {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Requests that reached it. */
  hits: number;
  close(): Promise<void>;
}

export interface Redirector {
  /** `127.0.0.1:<port>`, for BACKYARD_CLOUD_ALLOW_HOSTS. */
  hostPort: string;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** An address on the redirector (any path) that answers `status` with `location: to`. */
  to(target: string, status?: number, path?: string): string;
  /** Requests it answered. */
  hits: number;
  close(): Promise<void>;
}

const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

const closer = (server: http.Server) => () =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

/** A listener that answers 200 `{"reached": true}` to anything, and counts. */
export async function startTrap(): Promise<Trap> {
  const server = http.createServer((req, res) => {
    trap.hits++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"reached": true, "keys": [], "access_token": "x", "success": "reached"}');
  });
  const trap: Trap = { port: 0, url: '', hits: 0, close: closer(server) };
  trap.port = await listen(server);
  trap.url = `http://127.0.0.1:${trap.port}`;
  return trap;
}

/** A server whose every answer is a redirect: `/<anything>?status=307&to=<url>`. */
export async function startRedirector(): Promise<Redirector> {
  const server = http.createServer((req, res) => {
    redirector.hits++;
    req.resume();
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    res.writeHead(Number(query.get('status') ?? 307), { location: query.get('to') ?? '/' }).end();
  });
  const port = await listen(server);
  const redirector: Redirector = {
    hostPort: `127.0.0.1:${port}`,
    base: `http://127.0.0.1:${port}`,
    to: (target, status = 307, path = '/go') => `http://127.0.0.1:${port}${path}?${new URLSearchParams({ status: String(status), to: target })}`,
    hits: 0,
    close: closer(server),
  };
  return redirector;
}

/** Every IPv6 spelling of 127.0.0.1 (shared/publicAddress.ts) as a URL host in brackets. */
export const LOOPBACK_IN_IPV6 = [
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  '[::127.0.0.1]',
  '[::7f00:1]',
  '[::ffff:0:7f00:1]',
  '[::ffff:0:127.0.0.1]',
  '[64:ff9b::7f00:1]',
  '[2002:7f00:1::1]',
  '[::1]',
];

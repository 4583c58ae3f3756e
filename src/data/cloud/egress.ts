import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log.js';
import { checkDestination, OutboundRefused } from '../../shared/outbound/destination.js';

/**
 * The one way out of a cloud code sandbox: the sandbox has
 * no network of its own (a network namespace with only loopback), and this HTTP `CONNECT` proxy,
 * listening on a Unix socket bound into it, opens tunnels to public addresses only. The kernel keeps
 * the sandbox from going around it; this decides where the tunnel may lead.
 *
 * Refused: loopback, private, link-local, shared (CGNAT), multicast, reserved and documentation ranges
 * (RFC 6890's special-purpose registries), every IPv6 spelling of those, and every address of this
 * machine's interfaces, unless the exact `host:port` is in the operator's allow list. A name is
 * resolved here once and the tunnel goes to the address checked, so DNS cannot change the answer
 * between the check and the connection.
 */

export interface EgressOptions {
  /** `host:port` pairs (lower case, IPv6 in brackets) reachable although not public. */
  allow: readonly string[];
  log: Logger;
}

/**
 * The address to connect to for `host:port`, checked as every outbound address is
 * (shared/outbound/destination.ts), or why the destination is refused.
 */
async function destination(host: string, port: number, allow: readonly string[]): Promise<{ address?: string; refusal?: string }> {
  try {
    return { address: (await checkDestination(host, port, { allowHosts: allow })).address };
  } catch (error) {
    if (error instanceof OutboundRefused) {
      const addresses = error.addresses.length && error.addresses.join() !== error.host ? ` (${error.addresses.join(', ')})` : '';
      return { refusal: `${error.host} is not a public internet address${addresses}: cloud code may reach only public addresses` };
    }
    return { refusal: `${host.replace(/^\[|\]$/g, '')} could not be resolved (${(error as { code?: string }).code ?? 'no answer'})` };
  }
}

/**
 * An HTTP server that answers `CONNECT host:port` with a tunnel to a public address, and every other
 * request with 405. Listen on a Unix socket with `server.listen(path)`.
 */
export function createEgressProxy(options: EgressOptions): http.Server {
  const server = http.createServer((_req, res) => {
    res.writeHead(405, { 'content-type': 'text/plain' }).end('Only CONNECT tunnels are offered here.\n');
  });
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => undefined);
    const match = /^(\[[0-9a-f:.]+\]|[^\s:/[\]]+):(\d{1,5})$/i.exec(req.url ?? '');
    const port = Number(match?.[2]);
    const refuse = (status: string, why: string) => {
      options.log.info({ target: req.url, why }, 'cloud code egress refused');
      client.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${why}\n`);
    };
    if (!match || port < 1 || port > 65_535) return refuse('400 Bad Request', `"${req.url}" is not host:port`);
    void destination(match[1]!, port, options.allow).then(({ address, refusal }) => {
      if (!address) return refuse('403 Forbidden', refusal!);
      const upstream = net.connect({ host: address, port });
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      upstream.once('error', (error: NodeJS.ErrnoException) => {
        if (!connected) refuse('502 Bad Gateway', `${match[1]}:${port} could not be reached (${error.code ?? error.message})`);
        else client.destroy();
      });
      client.once('close', () => upstream.destroy());
    });
  });
  return server;
}

import http from 'node:http';
import type net from 'node:net';
import { Readable } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';

/**
 * A small HTTP load balancer for the several-processes test: requests go to the targets
 * in turn; a target that refuses the connection (a stopped process) is skipped and the request is
 * sent to the next one, as a load balancer with passive health checks does. Bodies are buffered so
 * that a refused request can be sent again.
 */
export interface RoundRobin {
  url: string;
  /** Which target answered each request, in order. */
  answeredBy: string[];
  close(): Promise<void>;
}

export async function startRoundRobin(targets: readonly string[]): Promise<RoundRobin> {
  const proxy = createProxyServer({ xfwd: true });
  const answeredBy: string[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        const target = targets[next++ % targets.length]!;
        proxy.web(req, res, { target, buffer: Readable.from([body]) }, (error: Error) => {
          const refused = (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
          if (refused && tries + 1 < targets.length && !res.headersSent) return attempt(tries + 1);
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`no target answered: ${error.message}`);
        });
        res.once('finish', () => answeredBy.push(target));
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answeredBy,
    close: () =>
      new Promise((resolve) => {
        proxy.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

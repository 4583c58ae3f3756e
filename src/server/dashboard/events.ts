import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Dashboard } from './context.js';

/**
 * Takes a reply over as a server-sent event stream (live output and logs), registered so that it is
 * ended when the server stops.
 * @returns the raw response and `send(event, data)`, which writes one event (data as JSON) while the
 *   stream is open.
 */
export function openEventStream(d: Pick<Dashboard, 'streams'>, reply: FastifyReply): { res: ServerResponse; send: (event: string, data: unknown) => void } {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  d.streams.add(res);
  const send = (event: string, data: unknown) => {
    if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  return { res, send };
}

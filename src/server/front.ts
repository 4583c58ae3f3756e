import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { DataHandler } from '../data/rest/handler.js';

/** Where the data API is mounted (design.md, URL table). */
export const DATA_PREFIX = '/data';

export interface FrontOptions {
  /** Answers requests for hosted sites and Web Apps (by `Host`); false for every other request. */
  hosted: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The data API, given the request target below DATA_PREFIX. */
  data: DataHandler;
  log: Logger;
}

/** The front of the one HTTP listener; `closing` makes every answer end its connection. */
export interface Front {
  /** For Fastify's `serverFactory`: the server whose requests go through the front first. */
  serverFactory: (fastifyHandler: (req: IncomingMessage, res: ServerResponse) => void) => http.Server;
  closing: boolean;
}

/**
 * The request listener in front of Fastify (design.md, "One process, one port"). The two kinds of
 * traffic whose speed is measured (bench/data-api, bench/webapps) never pass through Fastify's routing,
 * hooks and reply objects: a `Host` under the hosting domain goes to the hosted site or the Web App
 * proxy, and a path under `/data` to the data API, both on Node's own objects. Everything else (`/v1`,
 * `/mcp`, `/dashboard`, `/git`, `/sdk`, `/healthz`) goes to Fastify. One log line per request at
 * `info` for the traffic it answers, as Fastify's hook writes for the rest.
 */
export function createFront(options: FrontOptions): Front {
  const { hosted, data, log } = options;
  const logRequests = log.isLevelEnabled('info');
  const isData = (url: string) =>
    url.startsWith(DATA_PREFIX) && (url.length === DATA_PREFIX.length || url[DATA_PREFIX.length] === '/' || url[DATA_PREFIX.length] === '?');
  const front: Front = {
    closing: false,
    serverFactory: (fastifyHandler) =>
      http.createServer((req, res) => {
        // While stopping, answers end their connection so that keep-alive sockets do not hold the exit.
        if (front.closing) res.shouldKeepAlive = false;
        const url = req.url ?? '/';
        const start = logRequests ? performance.now() : 0;
        if (!hosted(req, res)) {
          if (!isData(url)) return fastifyHandler(req, res);
          data(req, res, url.slice(DATA_PREFIX.length) || '/');
        }
        if (logRequests) {
          res.once('finish', () =>
            log.info({ method: req.method, url: url.split('?')[0], status: res.statusCode, ms: Math.round(performance.now() - start) }, 'request'),
          );
        }
      }),
  };
  return front;
}

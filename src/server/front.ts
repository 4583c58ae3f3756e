import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { DataHandler } from '../data/rest/handler.js';

/** Where the data API is mounted (docs/design.md, URL table). */
export const DATA_PREFIX = '/data';
/**
 * Parse's GraphQL API, answered by the data API (its `/graphql` route) at the root of the host too,
 * where Parse Server serves it (`graphQLPath`, beside `mountPath`).
 */
export const GRAPHQL_PATH = '/graphql';

export interface FrontOptions {
  /** Answers requests for hosted sites and Web Apps (by `Host`); false for every other request. */
  hosted: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The data API, given the request target below DATA_PREFIX; undefined on a platform node (BACKYARD_ROLE), where `/data` is Fastify's 404. */
  data: DataHandler | undefined;
  log: Logger;
}

/** The front of the one HTTP listener; `closing` makes every answer end its connection. */
export interface Front {
  /** For Fastify's `serverFactory`: the server whose requests go through the front first. */
  serverFactory: (fastifyHandler: (req: IncomingMessage, res: ServerResponse) => void) => http.Server;
  closing: boolean;
}

/**
 * The request listener in front of Fastify (docs/design.md, "One process, one port"). The two kinds of
 * traffic whose speed is measured (bench/data-api, bench/webapps) never pass through Fastify's routing,
 * hooks and reply objects: a `Host` under the hosting domain goes to the hosted site or the Web App
 * proxy, and a path under `/data` (or `/graphql`) to the data API, both on Node's own objects. Everything else (`/v1`,
 * `/mcp`, `/dashboard`, `/git`, `/sdk`, `/healthz`) goes to Fastify. One log line per request at
 * `info` for the traffic it answers, as Fastify's hook writes for the rest.
 */
export function createFront(options: FrontOptions): Front {
  const { hosted, data, log } = options;
  const logRequests = log.isLevelEnabled('info');
  const under = (url: string, prefix: string) =>
    url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === '/' || url[prefix.length] === '?');
  const isData = (url: string) => under(url, DATA_PREFIX);
  const front: Front = {
    closing: false,
    serverFactory: (fastifyHandler) =>
      http.createServer((req, res) => {
        // While stopping, answers end their connection so that keep-alive sockets do not hold the exit.
        if (front.closing) res.shouldKeepAlive = false;
        const url = req.url ?? '/';
        const start = logRequests ? performance.now() : 0;
        if (!hosted(req, res)) {
          if (data && isData(url)) data(req, res, url.slice(DATA_PREFIX.length) || '/');
          else if (data && under(url, GRAPHQL_PATH)) data(req, res, url);
          else return fastifyHandler(req, res);
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

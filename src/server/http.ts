import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { homePaths } from '../config.js';
import type { Platform } from '../platform/platform.js';
import { managementApi } from '../api/rest.js';
import { operations } from '../../tools/index.js';
import { dashboard } from './dashboard/index.js';
import { sdkScript } from './sdk.js';
import { hostedSites, hostedUpgrades } from './hosting.js';
import { createDataHandler } from '../data/rest/handler.js';
import { publicRoutes } from '../data/rest/routes/public.js';
import { gitHost } from './git.js';
import { createFront } from './front.js';
import { oauthEndpoints } from './oauth/routes.js';
import { CONTAINER_HOST_NAME } from '../platform/devenvs/hostGateway.js';

/** What `backyard mcp` reads to find a Backyard already serving the same home. */
export interface ServerFile {
  pid: number;
  /** The public base URL, e.g. `http://localhost:4000`. */
  url: string;
  /** Random per start; `/healthz` answers it, proving the URL reaches this home's server. */
  instanceId: string;
}

export interface HttpServer {
  app: FastifyInstance;
  /** Public base URL. */
  url: string;
  instanceId: string;
  /** Stops accepting connections and waits for requests in flight. */
  close(): Promise<void>;
}

/** A Fastify plugin served next to the built-in interfaces (the MCP endpoint, src/serve.ts). */
export type HttpMount = (app: FastifyInstance) => Promise<void>;

export interface HttpServerOptions {
  port: number;
  host: string;
  /** Interfaces this module does not know, registered after `/v1` (the MCP endpoint: src/serve.ts). */
  mounts?: readonly HttpMount[];
}

/**
 * Starts the one HTTP listener that serves every interface by path (docs/design.md, "One process, one
 * port"): `/v1` (management API), the `mounts` (`/mcp`), `/dashboard`, `/git`, `/sdk`, `/healthz`
 * through Fastify, and in front of it (front.ts) `/data` (the data API) and the hosted sites and Web
 * Apps by `Host`. `startBackyard` (src/serve.ts) calls it with every interface. `BACKYARD_ROLE`
 * narrows it: a `data` node answers `/data`, `/graphql`, Backend Apps' sites, `/sdk` and `/healthz`;
 * a `platform` node everything but the data API (which `callBackendAPI` still reaches in process).
 * @throws Error with code EADDRINUSE when the port is taken.
 */
export async function startHttpServer(platform: Platform, options: HttpServerOptions): Promise<HttpServer> {
  const { log, services } = platform;
  const instanceId = randomUUID();
  const data = createDataHandler({
    apps: services.dataApi.apps,
    services: platform.dataServices,
    router: platform.dataRouter,
    mountUrl: () => services.urls.dataApi,
    publicRoute: publicRoutes(services.dataApi.apps),
    log,
  });
  // Sandboxed cloud code reaches its data API through a socket answered by the same handler.
  services.cloud.attachDataApi(data);
  // Decided (and, when cloud code cannot be confined, said in the log) once, at start.
  services.cloud.confinement();
  // Scheduled jobs run where the data API is served, and it follows the other processes (platform.ts `start`).
  await platform.start();
  // BACKYARD_ROLE: a data node serves the data API and Backend Apps' sites; a platform node the rest.
  const role = platform.config.role;
  const servesData = role !== 'platform';
  const servesPlatform = role !== 'data';
  const front = createFront({ hosted: hostedSites(platform, { webApps: servesPlatform }), data: servesData ? data : undefined, log });
  const app = Fastify({
    loggerInstance: log as unknown as import('fastify').FastifyBaseLogger,
    // One line per request, written by the onResponse hook below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request: the onResponse line below carries what matters, and children cost.
    childLoggerFactory: (logger) => logger,
    bodyLimit: 16 * 1024 * 1024,
    return503OnClosing: true,
    // Hosted sites, Web Apps and the data API are answered in front of Fastify (front.ts).
    serverFactory: front.serverFactory,
  });
  // Not even the hook when its line would be dropped.
  if (log.isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      log.info(
        { method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
        'request',
      );
      done();
    });
  }
  // WebSocket upgrades to Web Apps' subdomains go to their containers.
  app.server.on('upgrade', hostedUpgrades(platform, { data: servesData, webApps: servesPlatform }));
  app.get('/healthz', async () => ({ service: 'backyard', instanceId, role }));
  if (servesPlatform) {
    await app.register(managementApi(platform, operations), { prefix: '/v1' });
    for (const mount of options.mounts ?? []) await app.register(mount);
    // MCP authorization: discovery documents and the OAuth endpoints; consent is a dashboard page.
    await app.register(oauthEndpoints(platform));
    await app.register(dashboard(platform), { prefix: '/dashboard' });
    await app.register(gitHost(platform), { prefix: '/git' });
  }
  await app.register(sdkScript());

  await app.listen({ port: options.port, host: options.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const loopbackHost = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(options.host) ? 'localhost' : options.host;
  services.urls.bindDefault(`http://${loopbackHost}:${port}`);
  services.urls.bindListenPort(port);
  const url = services.urls.base;
  // Containers reach the same server on the host's bridge address, by the name backyard.internal;
  // opened by the development environment service once, before its first environment answers.
  const forContainers: http.Server[] = [];
  if (servesPlatform) {
    services.devenvs.serveContainersWith(async (hostAddress) => {
      const server = http.createServer((req, res) => app.server.emit('request', req, res));
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, hostAddress, () => resolve()));
      forContainers.push(server);
      return `http://${CONTAINER_HOST_NAME}:${port}`;
    });
    // Finds active Web App containers again and starts auto-deploy polling.
    services.webApps.start();
  }

  const serverFile = homePaths(platform.config.home).serverFile;
  fs.mkdirSync(path.dirname(serverFile), { recursive: true });
  const record: ServerFile = { pid: process.pid, url, instanceId };
  fs.writeFileSync(serverFile, JSON.stringify(record));
  log.info({ url, role, ...(servesPlatform ? { mcp: services.urls.mcp } : {}), home: platform.config.home }, 'Backyard is listening');

  return {
    app,
    url,
    instanceId,
    close: async () => {
      front.closing = true;
      await platform.stop();
      for (const server of forContainers) {
        server.close();
        server.closeAllConnections();
      }
      await app.close();
      try {
        const current = JSON.parse(fs.readFileSync(serverFile, 'utf8')) as ServerFile;
        if (current.instanceId === instanceId) fs.rmSync(serverFile);
      } catch {
        // Already gone or replaced by another server: nothing to clean.
      }
    },
  };
}

/**
 * The Backyard already serving this home, if its server file names a URL that answers with the
 * same instance id; undefined otherwise.
 */
export async function findRunningServer(home: string): Promise<ServerFile | undefined> {
  let record: ServerFile;
  try {
    record = JSON.parse(fs.readFileSync(homePaths(home).serverFile, 'utf8')) as ServerFile;
  } catch {
    return undefined;
  }
  try {
    const response = await fetch(`${record.url}/healthz`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { instanceId?: string };
    return body.instanceId === record.instanceId ? record : undefined;
  } catch {
    return undefined;
  }
}

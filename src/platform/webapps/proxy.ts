import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable, type Duplex } from 'node:stream';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import type { Logger } from '../../log.js';
import type { ContainerAddress } from './addresses.js';
import type { RouteRow } from './store.js';
import type { TaskTarget } from './swarm.js';
import { targetKey, type ServiceRoute } from './tasks.js';

/** What the proxy asks of the Web App service. */
export interface ProxyDirectory {
  /** The Web App at a subdomain and its active container's loopback port (remembered; no engine call). */
  route(subdomain: string): Promise<RouteRow | undefined>;
  /** Looks the deployment's container up again (by label) after a refused connection; resolves to its port, if it runs. */
  relocate(deploymentId: string): Promise<number | undefined>;
  /** The container's own network address, when it can be trusted and reached (addresses.ts); else the loopback port is used. */
  address(deploymentId: string): ContainerAddress | undefined;
  /** Stops using the container's network address after it did not answer there. */
  forget(deploymentId: string): void;
  /** The next task of a Web App that runs as a swarm service (tasks.ts), leaving out addresses tried already. */
  task(route: ServiceRoute, exclude: ReadonlySet<string>): Promise<TaskTarget | undefined>;
  /** A request to a task failed: it gets no more traffic until its health check passes again. */
  taskFailed(webAppId: string, target: TaskTarget, error: unknown): void;
}

/** How long an idempotent request to a Web App's service waits for a task to answer (tasks restarting, a one-task rolling update), in milliseconds. */
const TASK_WAIT_MS = 10_000;
/** Pause between two looks for a task while none answers, in milliseconds. */
const TASK_RETRY_MS = 100;
/** How long the connections to a task that is stopping stay open for the requests in flight on them, in milliseconds. */
const TASK_LINGER_MS = 15_000;

/** What the task list needs of a Web App's route. */
const serviceRoute = (route: RouteRow): ServiceRoute => ({ id: route.id, port: route.container_port ?? 0, healthPath: route.health_check_path });

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** A small HTML page for a Web App that cannot answer; HEAD gets the headers only. */
export function unavailablePage(req: IncomingMessage, res: ServerResponse, status: 502 | 503, title: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const heading = `${status} ${status === 502 ? 'Bad Gateway' : 'Service Unavailable'}`;
  const body = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${heading}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><small>${heading} · Backyard</small></p></body></html>\n`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'retry-after': '5',
    'content-security-policy': "default-src 'none'",
    'x-content-type-options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Headers of a request that carries a body: a length above zero, or a chunked transfer. */
const hasBody = (req: IncomingMessage) =>
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

/** A connection the other side closed or reset (a pooled keep-alive connection the app had already closed). */
const isReset = (error: unknown) => ['ECONNRESET', 'EPIPE'].includes(String((error as { code?: unknown }).code));

/** Why a Web App without a running container cannot answer, from its last deployment's status. */
function notRunning(route: RouteRow): string {
  if (route.last_status === 'failed') return 'Its last deployment failed and no earlier one is running. The deployment\'s error and logs (getDeployment) say why.';
  if (route.last_status === 'queued' || route.last_status === 'building' || route.last_status === 'starting') {
    return `Its deployment is ${route.last_status}; this page will show the app once the deployment is active.`;
  }
  return 'No deployment of it is running. Start one with startDeployment.';
}

/**
 * The reverse proxy in front of Web Apps (`appURL` is `http://<name>.localhost:4000/`),
 * built on `http-proxy-3` (the maintained successor of node-http-proxy, which Vite uses). A request
 * for a Web App's subdomain goes, streamed both ways, to the loopback port of its active container
 * with the original `Host` and `X-Forwarded-For/-Host/-Port/-Proto`, over keep-alive connections
 * where the app allows them; WebSocket upgrades are proxied too. No active container: a 503 page
 * that says whether a deployment is on its way or failed. A container that does not answer: a 502
 * page, and the container is looked up again by its label (its port may have changed after an
 * engine restart).
 *
 * HEAD requests reach the app as GET, whose body Node leaves out of the answer (some servers, busybox
 * httpd among them, answer HEAD with a body, which Node's HTTP parser refuses as a protocol error).
 * Connections to a container are pooled per deployment (so a port the engine gives to a later
 * container never receives a connection meant for an earlier one). A GET or HEAD whose pooled
 * connection turns out to have been closed by the app is tried once more on a new connection, as
 * HTTP allows for idempotent requests.
 *
 * It counts the requests in flight per deployment, so a superseded container is stopped only once
 * they have finished (`retire`): the new deployment takes the traffic first, with no gap.
 */
export class WebAppProxy {
  private readonly inFlight = new Map<string, number>();
  private readonly drained = new Map<string, Array<() => void>>();
  /** Keep-alive connections to each deployment's container, by deployment id (and the origin they go to). */
  private readonly agents = new Map<string, { target: string; agent: http.Agent }>();
  private readonly server: ProxyServer;

  constructor(
    private readonly directory: ProxyDirectory,
    private readonly log: Logger,
  ) {
    this.server = createProxyServer({ xfwd: true, ws: true });
    // Connection and Keep-Alive are hop-by-hop (RFC 9110 §7.6.1): an app that closes every connection
    // (busybox httpd does) must not make the client's connection to Backyard close too, which would
    // cost the client a new TCP connection per request on top of the proxy's own.
    this.server.on('proxyRes', (proxyRes) => {
      delete proxyRes.headers.connection;
      delete proxyRes.headers['keep-alive'];
    });
  }

  /** The Web App at `subdomain`, or undefined when the subdomain is not a Web App's (hosted sites then answer). */
  route(subdomain: string): Promise<RouteRow | undefined> {
    return this.directory.route(subdomain);
  }

  /** Answers a request for the Web App `route` (from `route`): forwards it, or answers a 503 or 502 page. */
  web(req: IncomingMessage, res: ServerResponse, route: RouteRow): void {
    if (route.service === 1 && route.stopped === 1) return unavailablePage(req, res, 503, `${route.app_name} is stopped`, 'It was stopped with stopWebApp; startWebApp runs it again.');
    if (route.service === 1 && route.active_deployment_id) return this.webTasks(req, res, route, route.active_deployment_id);
    const deploymentId = route.active_deployment_id;
    if (!deploymentId || !route.host_port) return unavailablePage(req, res, 503, `${route.app_name} is not running yet`, notRunning(route));
    this.enter(deploymentId);
    res.once('close', () => this.leave(deploymentId));
    const address = this.directory.address(deploymentId);
    const target = address ? `http://${address.ip}:${address.port}` : `http://127.0.0.1:${route.host_port}`;
    const agent = this.agentFor(deploymentId, target);
    const idempotent = (req.method === 'GET' || req.method === 'HEAD') && !hasBody(req);
    const fail = (error: unknown) => {
      this.unreachable(deploymentId, error);
      unavailablePage(
        req,
        res,
        502,
        `${route.app_name} is not answering`,
        'Its container did not answer this request: the app may have crashed or be restarting. Try again in a moment; the deployment\'s container logs (getDeployment) say more.',
      );
    };
    // HEAD goes to the app as GET (Node sends the client only the headers): some servers, busybox
    // httpd among them, answer HEAD with a body, which Node's strict parser refuses.
    const method = req.method === 'HEAD' ? 'GET' : undefined;
    this.server.web(req, res, { target, agent, method }, (error) => {
      if (!idempotent || res.headersSent || !isReset(error)) return fail(error);
      // Once more on a fresh connection; the request has no body, so an empty stream stands in for it.
      this.server.web(req, res, { target, agent: false as never, method, buffer: Readable.from([]) as never }, fail);
    });
  }

  /** Proxies a WebSocket upgrade for the Web App `route`; without a running container the socket is closed with a 503. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, route: RouteRow): void {
    if (route.service === 1 && route.active_deployment_id) {
      const service = serviceRoute(route);
      void this.directory.task(service, new Set()).then((target) => {
        if (!target) return void socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        this.server.ws(req, socket, head, { target: `ws://${target.ip}:${target.port}` }, (error) => {
          this.directory.taskFailed(route.id, target, error);
          socket.destroy();
        });
      });
      return;
    }
    if (!route.active_deployment_id || !route.host_port) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const deploymentId = route.active_deployment_id;
    this.server.ws(req, socket, head, { target: `ws://127.0.0.1:${route.host_port}` }, (error) => {
      this.unreachable(deploymentId, error);
      socket.destroy();
    });
  }

  /**
   * A request to a Web App that runs as a swarm service: sent to its next healthy task (round robin,
   * tasks.ts). When the task does not answer and the request can be sent again (GET or HEAD without
   * a body, nothing answered yet), it goes to another task, or waits for one for up to `TASK_WAIT_MS`
   * (a task restarting, the moment of a one-task rolling update); otherwise the client gets a 502 page.
   */
  private webTasks(req: IncomingMessage, res: ServerResponse, route: RouteRow, deploymentId: string): void {
    this.enter(deploymentId);
    res.once('close', () => this.leave(deploymentId));
    const service = serviceRoute(route);
    const idempotent = (req.method === 'GET' || req.method === 'HEAD') && !hasBody(req);
    const method = req.method === 'HEAD' ? 'GET' : undefined;
    const deadline = Date.now() + TASK_WAIT_MS;
    const tried = new Set<string>();
    const fail = () =>
      unavailablePage(
        req,
        res,
        502,
        `${route.app_name} is not answering`,
        'None of its containers answered this request: the app may have crashed or be restarting. Try again in a moment; the deployment\'s container logs (getDeployment) say more.',
      );
    const attempt = async (first: boolean): Promise<void> => {
      if (res.destroyed) return;
      let target = await this.directory.task(service, tried);
      if (!target && tried.size > 0) {
        // Every task was tried once: any that answers its health check again may be tried again.
        tried.clear();
        target = await this.directory.task(service, tried);
      }
      if (!target) {
        if (!idempotent || Date.now() > deadline) return fail();
        setTimeout(() => void attempt(first), TASK_RETRY_MS);
        return;
      }
      const key = targetKey(target);
      tried.add(key);
      const options = first ? { target: `http://${key}`, agent: this.agentFor(key, `http://${key}`), method } : { target: `http://${key}`, agent: false as never, method, buffer: Readable.from([]) as never };
      const sent = target;
      this.server.web(req, res, options, (error) => {
        if (first && idempotent && !res.headersSent && isReset(error)) {
          // A pooled connection the app had closed (busybox httpd closes each one): the same task
          // again on a fresh connection, as `web` does, before taking it for a task that failed.
          this.server.web(req, res, { target: `http://${key}`, agent: false as never, method, buffer: Readable.from([]) as never }, (again) => {
            this.directory.taskFailed(route.id, sent, again);
            if (res.headersSent || Date.now() > deadline) return fail();
            void attempt(false);
          });
          return;
        }
        this.directory.taskFailed(route.id, sent, error);
        if (!idempotent || res.headersSent || Date.now() > deadline) return fail();
        void attempt(false);
      });
    };
    void attempt(true).catch(fail);
  }

  /** Stops opening connections to a task's address (`ip:port`) that is stopping; those open close once their requests are done. */
  letGo(key: string): void {
    const known = this.agents.get(key);
    if (!known) return;
    this.agents.delete(key);
    setTimeout(() => known.agent.destroy(), TASK_LINGER_MS).unref();
  }

  /** Requests in flight to a deployment's container. */
  pending(deploymentId: string): number {
    return this.inFlight.get(deploymentId) ?? 0;
  }

  /**
   * For a deployment that no longer takes traffic: resolves once no request to it is in flight (or
   * after `maxMs`), then closes its pooled connections.
   */
  async retire(deploymentId: string, maxMs: number): Promise<void> {
    await this.drain(deploymentId, maxMs);
    this.agents.get(deploymentId)?.agent.destroy();
    this.agents.delete(deploymentId);
  }

  /** Resolves once no request to the deployment is in flight, or after `maxMs`. */
  drain(deploymentId: string, maxMs: number): Promise<void> {
    if (this.pending(deploymentId) === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, maxMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      const waiting = this.drained.get(deploymentId) ?? [];
      waiting.push(done);
      this.drained.set(deploymentId, waiting);
    });
  }

  /** Closes the pooled connections to containers. */
  close(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
    this.server.close();
  }

  /** The keep-alive pool of a deployment's container at `target` (a new one when its address changed). */
  private agentFor(deploymentId: string, target: string): http.Agent {
    const known = this.agents.get(deploymentId);
    if (known && known.target === target) return known.agent;
    known?.agent.destroy();
    // Idle connections go after 4 s, before most servers' own keep-alive time-out (Node's is 5 s).
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 4_000 });
    this.agents.set(deploymentId, { target, agent });
    return agent;
  }

  private unreachable(deploymentId: string, error: unknown): void {
    const e = error as { code?: string; message?: string };
    this.log.warn({ deploymentId, code: e.code, message: e.message }, 'web app container did not answer');
    this.directory.forget(deploymentId);
    void this.directory.relocate(deploymentId).catch(() => undefined);
  }

  private enter(deploymentId: string): void {
    this.inFlight.set(deploymentId, this.pending(deploymentId) + 1);
  }

  private leave(deploymentId: string): void {
    const left = this.pending(deploymentId) - 1;
    if (left > 0) {
      this.inFlight.set(deploymentId, left);
      return;
    }
    this.inFlight.delete(deploymentId);
    for (const done of this.drained.get(deploymentId) ?? []) done();
    this.drained.delete(deploymentId);
  }
}

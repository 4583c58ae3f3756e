import type { IncomingHttpHeaders } from 'node:http';
import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../log.js';
import type { RouteRow } from './store.js';

/** What the proxy asks of the Web App service. */
export interface ProxyDirectory {
  /** The Web App at a subdomain and its active container's loopback port (a database read, no engine call). */
  route(subdomain: string): RouteRow | undefined;
  /** Looks the deployment's container up again (by label) after a refused connection; resolves to its port, if it runs. */
  relocate(deploymentId: string): Promise<number | undefined>;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** A small HTML page for a Web App that cannot answer; HEAD gets the headers only. */
function unavailablePage(reply: FastifyReply, status: 502 | 503, title: string, message: string): void {
  const heading = `${status} ${status === 502 ? 'Bad Gateway' : 'Service Unavailable'}`;
  const body = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${heading}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><small>${heading} · Backyard</small></p></body></html>\n`;
  void reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'retry-after': '5',
      'content-security-policy': "default-src 'none'",
      'x-content-type-options': 'nosniff',
    })
    .send(reply.request.method === 'HEAD' ? undefined : body);
}

/** Headers of a request that carries a body: a length above zero, or a chunked transfer. */
const hasBody = (headers: IncomingHttpHeaders) =>
  (headers['content-length'] !== undefined && headers['content-length'] !== '0') || headers['transfer-encoding'] !== undefined;

/**
 * The reverse proxy in front of Web Apps (issue 6, item 4: `appURL` is `http://<name>.localhost:4000/`),
 * built on `@fastify/reply-from` (undici, pooled keep-alive connections to each container). A request
 * for a Web App's subdomain goes, body streamed, to the loopback port of its active container, with
 * the original `Host` and `X-Forwarded-For/-Host/-Proto`. No active container: a 503 page that says
 * whether a deployment is on its way or failed. A container that does not answer: a 502 page, and
 * the container is looked up again by its label (its port may have changed after an engine restart).
 *
 * It counts the requests in flight per deployment, so a superseded container is stopped only once
 * they have finished (`drain`): the new deployment takes the traffic first, with no gap.
 */
export class WebAppProxy {
  private readonly inFlight = new Map<string, number>();
  private readonly drained = new Map<string, Array<() => void>>();

  constructor(
    private readonly directory: ProxyDirectory,
    private readonly log: Logger,
  ) {}

  /** Registers `@fastify/reply-from` on the server's root (its `reply.from` decorator), before it listens. */
  async register(app: FastifyInstance): Promise<void> {
    await app.register(replyFrom, {
      disableRequestLogging: true,
      undici: { connections: 256, keepAliveTimeout: 4_000, headersTimeout: 0, bodyTimeout: 0 },
    });
  }

  /** The Web App at `subdomain`, or undefined when the subdomain is not a Web App's (hosted sites then answer). */
  route(subdomain: string): RouteRow | undefined {
    return this.directory.route(subdomain);
  }

  /**
   * Answers a request for the Web App `route` (from `route`): forwards it or answers 502/503. Called
   * from an `onRequest` hook, which must not call `done` afterwards (the reply is sent here).
   */
  forward(request: FastifyRequest, reply: FastifyReply, route: RouteRow): void {
    const deploymentId = route.active_deployment_id;
    if (!deploymentId || !route.host_port) {
      const why =
        route.last_status === 'failed'
          ? 'Its last deployment failed and no earlier one is running. The deployment\'s error and logs (getDeployment) say why.'
          : route.last_status && ['queued', 'building', 'starting'].includes(route.last_status)
            ? `Its deployment is ${route.last_status}; this page will show the app once the deployment is active.`
            : 'No deployment of it is running. Start one with startDeployment.';
      return unavailablePage(reply, 503, `${route.app_name} is not running yet`, why);
    }
    const raw = request.raw;
    const target = `http://127.0.0.1:${route.host_port}${raw.url?.startsWith('/') ? raw.url : '/'}`;
    const originalHost = raw.headers.host ?? '';
    if (raw.method !== 'GET' && raw.method !== 'HEAD' && hasBody(raw.headers)) {
      // Streamed as it arrives: reply-from sends a stream body untouched.
      (request as { body?: unknown }).body = raw;
    }
    this.enter(deploymentId);
    reply.raw.once('close', () => this.leave(deploymentId));
    reply.from(target, {
      // A reverse proxy passes the app's own answers on, 503s included: never retried here.
      retryDelay: () => null,
      rewriteRequestHeaders: (_req, headers) => {
        const forwardedFor = headers['x-forwarded-for'];
        return {
          ...headers,
          host: originalHost,
          'x-forwarded-for': forwardedFor ? `${String(forwardedFor)}, ${raw.socket.remoteAddress ?? ''}` : (raw.socket.remoteAddress ?? ''),
          'x-forwarded-host': originalHost,
          'x-forwarded-proto': 'http',
        };
      },
      onError: (failed, { error }) => {
        this.log.warn({ deploymentId, code: (error as { code?: string }).code, message: error.message }, 'web app container did not answer');
        void this.directory.relocate(deploymentId).catch(() => undefined);
        unavailablePage(
          failed as FastifyReply,
          502,
          `${route.app_name} is not answering`,
          'Its container did not answer this request: the app may have crashed or be restarting. Try again in a moment; the deployment\'s container logs (getDeployment) say more.',
        );
      },
    });
  }

  /** Requests in flight to a deployment's container. */
  pending(deploymentId: string): number {
    return this.inFlight.get(deploymentId) ?? 0;
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

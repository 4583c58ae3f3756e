import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import { ASSETS } from './assets.js';
import { bindSession, formOf, sendNotFound, sendPage, signInPath, type Dashboard } from './context.js';
import { html } from './html.js';
import { FlashMessages, SESSION_COOKIE, readCookie, sameOrigin, sameSecret, securityHeaders } from './security.js';
import { PUBLIC, signInRoutes } from './signin.js';
import { overviewRoutes } from './overview.js';
import { appRoutes } from './app.js';
import { dataRoutes } from './data.js';
import { schemaRoutes } from './schema.js';
import { cloudRoutes } from './cloud.js';
import { cloudVersionRoutes } from './cloudVersions.js';
import { consoleRoutes } from './console.js';
import { graphQLRoutes } from './graphql.js';
import { jobRoutes } from './jobs.js';
import { mailRoutes } from './mail.js';
import { pushRoutes } from './push.js';
import { environmentRoutes } from './environments.js';
import { webAppRoutes } from './webapps.js';
import { lifecycleRoutes } from './lifecycle.js';
import { serverSettingsRoutes } from './serverSettings.js';
import { authorizeRoutes } from './authorize.js';
import { connectionRoutes } from './connections.js';
import { parseDashboardRoutes } from './parse.js';
import { ParseDashboards } from '../parseDashboard.js';

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

/** Answers a request that has no (valid) session: pages send the browser to sign in; everything else gets 401. */
function refuseWithoutSession(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const wantsPage = isRead(request.method) && !String(request.headers.accept ?? '').includes('text/event-stream');
  if (wantsPage) return reply.code(303).header('location', signInPath(request.url)).send();
  if (String(request.headers.accept ?? '').includes('text/html')) {
    return sendPage(reply, 401, {
      title: 'Sign in first',
      heading: html`<h1>Sign in first</h1>`,
      body: html`<p>Nothing was changed: this browser is not signed in to the Backyard dashboard (or the request came from another site, which never carries the sign-in).</p><p><a href="/dashboard/sign-in">Sign in</a></p>`,
    });
  }
  return reply.code(401).type('text/plain; charset=utf-8').send('Sign in to the Backyard dashboard first: open /dashboard/sign-in.');
}

/** Refuses a change that did not come from the dashboard's own pages (cross-site request forgery). */
function refuseForeign(reply: FastifyReply, why: string): FastifyReply {
  return sendPage(reply, 403, {
    title: 'Request refused',
    heading: html`<h1>Request refused</h1>`,
    body: html`<p>${why}</p><p>Changes are accepted only from the dashboard's own pages. <a href="/dashboard">Open the dashboard</a> and try again.</p>`,
  });
}

/**
 * The web dashboard at `/dashboard`: sign-in, the account's overview, Backend App pages
 * (keys, data browser, schema, cloud code, API console, jobs), Web Apps (deployments, live logs) and
 * development environments.
 *
 * Register with the prefix `/dashboard` (its not-found page is the dashboard's own). Every route but the sign-in pages and the two static assets needs a session cookie; every change
 * (any method but GET and HEAD) also needs the session's CSRF token and a same-origin `Origin`.
 * Another account's apps and environments answer 404, like unknown ones.
 */
export function dashboard(platform: Platform) {
  const { services } = platform;
  const d: Dashboard = {
    platform,
    services,
    sessions: services.dashboardSessions,
    flash: new FlashMessages(),
    streams: new Set(),
  };
  return async (app: FastifyInstance) => {
    app.decorateRequest('dashboardSession', null);
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      const fields: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(body as string)) if (!(k in fields)) fields[k] = v;
      done(null, fields);
    });

    app.addHook('onRequest', async (_request, reply) => {
      securityHeaders(reply);
      reply.header('cache-control', 'no-store');
    });

    app.addHook('preHandler', async (request, reply) => {
      const config = request.routeOptions.config as { dashboardPublic?: boolean };
      if (config.dashboardPublic) {
        if (!isRead(request.method) && !sameOrigin(request, services.urls.base)) {
          return refuseForeign(reply, 'This sign-in came from another site.');
        }
        return;
      }
      const session = await d.sessions.find(readCookie(request, SESSION_COOKIE));
      if (!session) return refuseWithoutSession(request, reply);
      if (!isRead(request.method)) {
        if (!sameOrigin(request, services.urls.base)) return refuseForeign(reply, 'This change came from another site or page.');
        const sent = formOf(request)._csrf ?? request.headers['x-csrf-token'];
        if (typeof sent !== 'string' || !sameSecret(sent, session.csrfToken)) {
          return refuseForeign(reply, 'This change did not carry the page\'s security token (or the page is from an earlier session).');
        }
      }
      bindSession(request, session);
    });

    // Each Backend App's Parse Dashboard, built on first use and dropped with the app.
    const parseDashboards = new ParseDashboards();
    const stopDropping = platform.events.on('app_deleted', ({ appId }) => (appId === undefined ? parseDashboards.dropAll() : parseDashboards.drop(appId)));

    app.addHook('preClose', async () => {
      stopDropping();
      parseDashboards.dropAll();
      for (const stream of d.streams) stream.end();
      d.streams.clear();
    });

    app.get<{ Params: { name: string } }>('/assets/:name', PUBLIC, (request, reply) => {
      const asset = ASSETS[request.params.name];
      if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('No such asset.');
      return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
    });

    app.setNotFoundHandler(async (request, reply) => {
      const session = await d.sessions.find(readCookie(request, SESSION_COOKIE));
      securityHeaders(reply);
      reply.header('cache-control', 'no-store');
      if (!session) return refuseWithoutSession(request, reply);
      return sendNotFound(reply, session);
    });

    signInRoutes(app, d);
    overviewRoutes(app, d);
    appRoutes(app, d);
    dataRoutes(app, d);
    schemaRoutes(app, d);
    cloudRoutes(app, d);
    cloudVersionRoutes(app, d);
    consoleRoutes(app, d);
    graphQLRoutes(app, d);
    jobRoutes(app, d);
    mailRoutes(app, d);
    pushRoutes(app, d);
    environmentRoutes(app, d);
    webAppRoutes(app, d);
    lifecycleRoutes(app, d);
    serverSettingsRoutes(app, d);
    authorizeRoutes(app, d);
    connectionRoutes(app, d);
    parseDashboardRoutes(app, d, parseDashboards);
  };
}

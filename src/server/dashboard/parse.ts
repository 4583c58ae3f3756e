import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ParseDashboards, type ParseDashboardApp } from '../parseDashboard.js';
import { ownApp, redirect, sessionOf, sendNotFound, type Dashboard } from './context.js';

type AppParams = { Params: { appId: string } };

/** What follows the `skip`-th `marker` of a request path (`/dashboard/apps/X/parse/<rest>`), query included. */
function rest(url: string, marker: string, skip = 1): string {
  let at = -marker.length;
  for (let i = 0; i < skip; i++) {
    at = url.indexOf(marker, at + marker.length);
    if (at < 0) return '';
  }
  return url.slice(at + marker.length);
}

/**
 * Parse Dashboard's client finds the page it shows from the first "apps" in the address
 * (DashboardView's getCurrentRoute in its bundle: `pathname.split("apps")[1].split("/")[2]`), so
 * nothing before its own `apps/<name>/<page>` may contain "apps": a mount under
 * `/dashboard/apps/<appId>/` shows "Feature unavailable" on its Config page. So it is mounted at
 * `/dashboard/parse/<appId>`, with an "apps" inside an application id written `%61pps` (the same
 * id to the server, not the same text to that split), and `/dashboard/apps/<appId>/parse/...`
 * leads there.
 */
const mountSegment = (appId: string): string => encodeURIComponent(appId).replace(/apps/g, '%61pps');

/** Where a Backend App's Parse Dashboard is mounted, without the trailing slash, as requests carry it. */
export const parseDashboardPath = (appId: string): string => `/dashboard/parse/${mountSegment(appId)}`;

/** The app's data browser in its Parse Dashboard, where Backyard's app page links to. */
export const parseDataBrowserHref = (app: { appId: string; appName: string }): string =>
  `${parseDashboardPath(app.appId)}/apps/${nameForUrl(app.appName)}/browser`;

/**
 * The name in the dashboard's own URLs (`apps/<name>/browser/...`): the app's name in lowercase
 * letters, digits and dashes, with no "apps" in it (see `mountSegment`).
 */
export function nameForUrl(appName: string): string {
  const slug = appName.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return (slug || 'app').replace(/apps/g, 'app-s');
}

/**
 * The content policy of Parse Dashboard's answers. Its pages set their mount path in an inline
 * script (app.js), allowed by its hash; its React views set inline styles; its code editor
 * starts workers from blob URLs. It talks to the data API and the GraphQL API only.
 */
function policy(scriptHashes: string[], connect: string[]): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${scriptHashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self' ${[...new Set(connect)].join(' ')}`.trim(),
    "worker-src 'self' blob:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    // The pages carry <base href="<mount path>">.
    "base-uri 'self'",
  ].join('; ');
}

/** The sha256 sources of the inline scripts (without attributes) of an HTML page, for script-src. */
export function inlineScriptHashes(page: string): string[] {
  return [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
}

/**
 * Sets the security headers of an answer Parse Dashboard writes itself: those of every dashboard
 * answer (security.ts), with a content policy that allows exactly the inline scripts of the page
 * it sends (hashed as the page is sent: the page is Parse Dashboard's, not ours to copy).
 * `no-store` unless Parse Dashboard sets its own caching (its static bundles, which hold no keys).
 */
function secureAnswer(res: ServerResponse, connect: string[]): void {
  res.setHeader('content-security-policy', policy([], connect));
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('referrer-policy', 'same-origin');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
  res.setHeader('cache-control', 'no-store');
  // Parse Dashboard sends its pages whole with express's res.send (app.js), found on the response's
  // prototype once express has it: an own property in front of it sees each page before any header
  // is sent (express-session, in Parse Dashboard, sends headers early from its own end()).
  Object.defineProperty(res, 'send', {
    configurable: true,
    writable: true,
    value(this: ServerResponse & { send(body: unknown): unknown }, body: unknown) {
      if (typeof body === 'string' && !res.headersSent) {
        const hashes = inlineScriptHashes(body);
        if (hashes.length > 0) res.setHeader('content-security-policy', policy(hashes, connect));
      }
      return (Object.getPrototypeOf(res) as { send(body: unknown): unknown }).send.call(this, body);
    },
  });
}

/**
 * The real Parse Dashboard (the `parse-dashboard` package) of each Backend App at
 * `/dashboard/parse/<appId>/` (`/dashboard/apps/<appId>/parse/...` leads there), for the app's owner signed in to Backyard's dashboard, and no
 * one else: the dashboard's guard (index.ts) turns a browser without a session away before this
 * runs, and another account's app answers the same 404 as an unknown one, so neither its page nor
 * its configuration (`parse-dashboard-config.json`, which holds the master key) reaches them.
 * The master key goes only into that configuration, answered on Backyard's own origin with
 * `no-store`; Parse Dashboard sends it to the data API in headers or bodies, never in a URL.
 *
 * Only GET and HEAD reach Parse Dashboard: its own state-changing endpoints (its sign-in, which has
 * no users here, and its AI agent, not configured) stay behind the dashboard's 404 for other
 * methods, so nothing changes without Backyard's CSRF rules. Changes to data go from the browser
 * to the data API with the master key, as with any Parse Dashboard.
 *
 * `dashboards` holds the built express apps; entries of deleted apps are dropped by the caller.
 */
export function parseDashboardRoutes(app: FastifyInstance, d: Dashboard, dashboards: ParseDashboards): void {
  // The address of the app's other pages (`/dashboard/apps/<appId>/parse/...`) leads to the mount.
  app.get<AppParams>('/apps/:appId/parse', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return redirect(reply, `${parseDashboardPath(backendApp.appId)}/`);
  });
  app.get<AppParams>('/apps/:appId/parse/*', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return redirect(reply, `${parseDashboardPath(backendApp.appId)}/${rest(request.raw.url!, `/parse/`)}`);
  });
  app.get<AppParams>('/parse/:appId', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return redirect(reply, `${parseDashboardPath(backendApp.appId)}/`);
  });

  app.get<AppParams>('/parse/:appId/*', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const mountPath = parseDashboardPath(backendApp.appId);
    // The same id written otherwise (a typed address): to the one form the dashboard is mounted at.
    if (!request.raw.url!.startsWith(`${mountPath}/`)) return redirect(reply, `${mountPath}/${rest(request.raw.url!, '/', 4)}`);
    const keys = await d.services.backendApps.keys(backendApp.appId);
    if (!keys) return sendNotFound(reply, sessionOf(request), 'Backend App');
    const { urls } = d.services;
    const config: ParseDashboardApp = {
      appId: backendApp.appId,
      appName: backendApp.appName,
      appNameForURL: nameForUrl(backendApp.appName),
      masterKey: keys.masterKey,
      javascriptKey: backendApp.javascriptKey,
      restKey: backendApp.restKey,
      clientKey: backendApp.clientKey,
      serverURL: backendApp.apiURL,
      graphQLServerURL: urls.graphql,
      // The data API answers GET /security for the master key (src/data/rest/routes/security.ts).
      enableSecurityChecks: true,
    };
    reply.hijack();
    const res = reply.raw;
    secureAnswer(res, [new URL(config.serverURL).origin, new URL(config.graphQLServerURL).origin]);
    dashboards.serve(config, mountPath, request.raw, res, (err) => {
      if (err) d.platform.log.error({ err: { message: err instanceof Error ? err.message : String(err) }, app: backendApp.appId }, 'Parse Dashboard failed');
      if (res.headersSent) return void res.destroy();
      res.statusCode = err ? 500 : 404;
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end(err ? 'Parse Dashboard failed to answer; the server log says why.' : 'Parse Dashboard has no such page.');
    });
  });
}

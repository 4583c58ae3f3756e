import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import send from 'send';
import { homePaths } from '../config.js';
import type { Platform } from '../platform/platform.js';

/** The hosted folder of an app, inside its cloud code tree (docs/design.md, "State"). */
export const hostedFolder = (home: string, appId: string): string => path.join(homePaths(home).app(appId), 'cloud', 'public');

/** `..` as a whole path segment, with either slash (as `send` tests it). */
const UP_PATH = /(?:^|[\\/])\.\.(?:[\\/]|$)/;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  500: 'Internal Server Error',
};

/**
 * The subdomain a `Host` header names under the hosting domain, or undefined when the header names
 * something else: `site.localhost:4000` → `site` with parent `localhost`. Any port; compared
 * case-insensitively; a trailing dot is ignored. The bare parent and the server's own public host
 * (when it happens to lie under the parent, e.g. `api.example.com` under `example.com`) give undefined,
 * so those requests go on to the normal routes.
 */
export function hostedSubdomain(host: string | undefined, hostingParent: string, publicHostname: string): string | undefined {
  if (!host || host.startsWith('[')) return undefined; // no header, or an IPv6 literal
  const colon = host.lastIndexOf(':');
  let hostname = (colon < 0 ? host : host.slice(0, colon)).toLowerCase();
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  const suffix = `.${hostingParent.toLowerCase()}`;
  if (hostname.length <= suffix.length || !hostname.endsWith(suffix)) return undefined;
  if (hostname === publicHostname.toLowerCase()) return undefined;
  return hostname.slice(0, -suffix.length);
}

/** Escapes text for an HTML page. */
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** Answers a small HTML page for a failure; HEAD gets the headers only. */
function errorPage(req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const title = `${status} ${REASONS[status] ?? 'Error'}`;
  const body = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${escapeHtml(message)}</p></body></html>\n`;
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-cache');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Whether `file` exists only inside `realRoot` once symbolic links are followed (a missing file passes: nothing to serve). */
async function staysInside(file: string, realRoot: string): Promise<boolean> {
  try {
    const real = await fs.promises.realpath(file);
    return real === realRoot || real.startsWith(realRoot + path.sep);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR';
  }
}

/**
 * Serves one request from `root` with `send` (content types, `index.html` for folders, ETag and
 * Last-Modified with 304, HEAD), after refusing what `send` does not check: symbolic links that
 * lead out of the folder.
 */
async function serveFolder(req: IncomingMessage, res: ServerResponse, root: string): Promise<void> {
  const url = req.url ?? '/';
  if (!url.startsWith('/')) return errorPage(req, res, 400, 'The request target must be a path.');
  const end = url.search(/[?#]/);
  const pathname = end < 0 ? url : url.slice(0, end);
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return errorPage(req, res, 400, 'The path is not valid percent-encoding.');
  }
  if (decoded.includes('\0')) return errorPage(req, res, 400, 'The path holds a NUL character.');
  if (UP_PATH.test(decoded)) return errorPage(req, res, 403, 'Paths may not leave the site\'s folder.');

  let realRoot: string;
  try {
    realRoot = await fs.promises.realpath(root);
  } catch {
    return errorPage(req, res, 404, 'This site has no files yet: deploy them under public/ with deployCloudCode.');
  }
  const candidate = path.join(root, decoded);
  let inside = await staysInside(candidate, realRoot);
  if (inside) {
    const stat = await fs.promises.stat(candidate).catch(() => undefined);
    if (stat?.isDirectory()) inside = await staysInside(path.join(candidate, 'index.html'), realRoot);
  }
  if (!inside) return errorPage(req, res, 403, 'Paths may not leave the site\'s folder.');

  // `no-cache`: browsers revalidate every time (ETag / Last-Modified → 304), so a redeploy shows at once.
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  send(req, pathname, { root, index: ['index.html'], dotfiles: 'deny', cacheControl: false, etag: true, lastModified: true })
    .on('error', (err: { status?: number; statusCode?: number }) => {
      const status = err.status ?? err.statusCode ?? 500;
      const message =
        status === 404 ? `There is no ${pathname} on this site.` : status === 403 ? 'This path may not be served.' : REASONS[status] ?? 'The file could not be read.';
      errorPage(req, res, status >= 400 && status < 600 ? status : 500, message);
    })
    .pipe(res);
}

/**
 * Serves hosted sites and Web Apps by `Host` header (docs/design.md, URL table: `http://<sub>.localhost:4000/`),
 * on Node's own request objects before any framework routing. A request for `<sub>.<hosting domain>`
 * (any port) goes to the Web App of that subdomain through the reverse proxy, or is answered
 * from the Backend App's `cloud/public/` folder: GET and HEAD only (405 otherwise), 404 for an unknown
 * subdomain or a missing file, 400/403 for paths that try to leave the folder.
 * @returns a function that answers such a request and returns true, or returns false at once (after
 *   one string comparison) for every other request (the bare domain, `localhost:4000`, other hosts).
 */
export function hostedSites(platform: Platform, options: { webApps: boolean } = { webApps: true }): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { services, config, log } = platform;
  // Known once the listener is bound (the base URL may depend on the port); fixed from then on.
  let domains: { parent: string; publicHostname: string } | undefined;
  const currentDomains = () => {
    if (domains) return domains;
    let base: string;
    try {
      base = services.urls.base;
    } catch {
      return undefined; // not listening yet (e.g. inject before listen): no hosted sites
    }
    domains = { parent: services.urls.hostingParent, publicHostname: new URL(base).hostname };
    return domains;
  };

  return function serveHosted(req, res) {
    const d = currentDomains();
    const sub = d && hostedSubdomain(req.headers.host, d.parent, d.publicHostname);
    if (sub === undefined) return false;
    const serve = async () => {
      const webApp = await services.webApps.proxy.route(sub);
      // Web Apps run on the platform node's engine (BACKYARD_ROLE): a data node cannot reach them.
      if (webApp && !options.webApps) return errorPage(req, res, 404, `${sub}.${d!.parent} is a Web App, served by the platform node: route this host there.`);
      if (webApp) return services.webApps.proxy.web(req, res, webApp);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return errorPage(req, res, 405, 'Hosted sites answer GET and HEAD only.', { Allow: 'GET, HEAD' });
      }
      const appId = await services.backendApps.hostedApp(sub);
      if (appId === undefined) return errorPage(req, res, 404, `No site is hosted at ${sub}.${d!.parent}.`);
      // On PostgreSQL the site's files are the active cloud code version's, put on this node's disk first.
      if (platform.cloudTrees && !platform.cloudTrees.ready(appId)) await platform.cloudTrees.prepare(appId);
      return serveFolder(req, res, hostedFolder(config.home, appId));
    };
    serve().catch((err: unknown) => {
      log.error({ err, host: req.headers.host, url: req.url }, 'hosted site failure');
      errorPage(req, res, 500, 'The file could not be served.');
    });
    return true;
  };
}

/**
 * An `upgrade` listener for the HTTP server: WebSocket upgrades to a Web App's subdomain
 * are proxied to its active container; those to the data API's path on Backyard's own host go to
 * LiveQuery; any other upgrade is refused (closed), as Node does when no listener is set.
 * `serves` (BACKYARD_ROLE) leaves out LiveQuery on a platform node and Web Apps on a data node.
 */
export function hostedUpgrades(platform: Platform, serves: { data: boolean; webApps: boolean } = { data: true, webApps: true }): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const { services } = platform;
  return (req, socket, head) => {
    let sub: string | undefined;
    let dataPath: string | undefined;
    try {
      sub = hostedSubdomain(req.headers.host, services.urls.hostingParent, new URL(services.urls.base).hostname);
      dataPath = new URL(services.urls.dataApi).pathname.replace(/\/+$/, '');
    } catch {
      sub = undefined; // not listening yet
    }
    if (sub === undefined) {
      // LiveQuery: the SDK turns the data API's http(s) address into ws(s) on the same path.
      const pathname = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '');
      if (serves.data && dataPath !== undefined && pathname === dataPath) return platform.liveQuery.upgrade(req, socket, head);
      socket.destroy();
      return;
    }
    if (!serves.webApps) return socket.destroy();
    services.webApps.proxy
      .route(sub)
      .then((webApp) => {
        if (!webApp) return socket.destroy();
        services.webApps.proxy.upgrade(req, socket, head, webApp);
      })
      .catch(() => socket.destroy());
  };
}

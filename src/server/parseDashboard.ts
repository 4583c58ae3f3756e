import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * One app as Parse Dashboard's configuration lists it (the `apps` entries of its README,
 * "Configuring Parse Dashboard"; node_modules/parse-dashboard/README.md).
 */
export interface ParseDashboardApp {
  appId: string;
  appName: string;
  /** The path segment of the app inside the dashboard (`apps/<appNameForURL>/browser/...`). */
  appNameForURL: string;
  masterKey: string;
  javascriptKey: string;
  restKey: string;
  clientKey: string;
  /** The data API as a browser reaches it. */
  serverURL: string;
  /** The GraphQL API as a browser reaches it (the API console's GraphQL page). */
  graphQLServerURL: string;
  /**
   * Whether the dashboard's Security page (App Settings, Security) runs the data API's
   * `GET /security` report; without it the page only asks for this option (Parse Dashboard's
   * README, "Security Checks").
   */
  enableSecurityChecks: boolean;
}

/** A node request handler; `done` is called when the dashboard did not answer (with the error, if one was thrown). */
type Handler = (req: IncomingMessage, res: ServerResponse, done: (err?: unknown) => void) => void;

interface Built {
  /** The configuration it was built from, as JSON: a change (name, keys, addresses) builds it again. */
  config: string;
  handler: Handler;
}

// CommonJS packages without types: Parse Dashboard's app factory, and the express it was written for
// (its own dependency, so the mount behaves as Parse Dashboard expects whatever express the project has).
const require = createRequire(import.meta.url);
type ExpressApp = Handler & { use(path: string, app: unknown): void; disable(setting: string): void };
let modules: { ParseDashboard: new (config: unknown, options: unknown) => ExpressApp; express: () => ExpressApp } | undefined;
function load() {
  // Loaded on first use: requiring parse-dashboard starts a look-up of its newest version on the npm registry (app.js, top level).
  modules ??= {
    ParseDashboard: require('parse-dashboard') as new (config: unknown, options: unknown) => ExpressApp,
    express: createRequire(require.resolve('parse-dashboard'))('express') as () => ExpressApp,
  };
  return modules;
}

/**
 * The Parse Dashboard express apps of Backend Apps, one per app, built on first use (about 50 ms)
 * with that app alone in its configuration and mounted at the app's own path, kept while its
 * configuration stays the same, and dropped when the app is deleted (`drop`) or when more than
 * `limit` apps were opened since (least recently used first).
 *
 * This module knows nothing of who may open which dashboard: the caller checks that, before
 * `serve`, for every request. So Parse Dashboard runs without `users` and with `dev` (Parse
 * Dashboard's app.js: its own sign-in and its refusal of requests from other machines, which would
 * otherwise refuse every browser not on loopback, are replaced by the caller's check).
 */
export class ParseDashboards {
  private readonly built = new Map<string, Built>();

  constructor(private readonly limit = 32) {}

  /**
   * Lets the dashboard of `app`, mounted at `mountPath` (e.g. `/dashboard/apps/<appId>/parse`, no
   * trailing slash, URL-encoded as requests carry it), answer `req` (whose `url` is the full path).
   * `done` is called when it does not answer (an error it threw, or a path it has no route for).
   */
  serve(app: ParseDashboardApp, mountPath: string, req: IncomingMessage, res: ServerResponse, done: (err?: unknown) => void): void {
    const config = JSON.stringify([app, mountPath]);
    let entry = this.built.get(app.appId);
    if (entry?.config !== config) entry = { config, handler: build(app, mountPath) };
    // Re-inserted: the map's order is the order of last use.
    this.built.delete(app.appId);
    this.built.set(app.appId, entry);
    for (const appId of this.built.keys()) {
      if (this.built.size <= this.limit) break;
      this.built.delete(appId);
    }
    entry.handler(req, res, done);
  }

  /** Forgets the dashboard of `appId` (a deleted app). */
  drop(appId: string): void {
    this.built.delete(appId);
  }

  /** Forgets every dashboard (when which apps were deleted is not known). */
  dropAll(): void {
    this.built.clear();
  }

  /** How many dashboards are built (for tests). */
  get size(): number {
    return this.built.size;
  }

  /** Whether the dashboard of `appId` is built (for tests). */
  has(appId: string): boolean {
    return this.built.has(appId);
  }
}

function build(app: ParseDashboardApp, mountPath: string): Handler {
  const { ParseDashboard, express } = load();
  const dashboard = new ParseDashboard({ apps: [app] }, { dev: true });
  dashboard.disable('x-powered-by');
  const parent = express();
  parent.disable('x-powered-by');
  // Parse Dashboard adds its routes when mounted (app.js, `app.on('mount')`), under this path.
  parent.use(mountPath, dashboard);
  return parent;
}

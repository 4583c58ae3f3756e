import type { TestServer } from './server.js';

export interface TestApp {
  appId: string;
  keys: { restKey: string; javascriptKey: string; clientKey: string; dotnetKey: string; masterKey: string };
  /** `${server.url}/data` */
  apiURL: string;
  /** Calls the data API with the REST key (or the master key when `master`). */
  call(method: string, path: string, options?: { body?: unknown; master?: boolean; sessionToken?: string; headers?: Record<string, string>; rawBody?: string }): Promise<{ status: number; body: any; headers: Headers }>;
}

/** Creates a Backend App for alice on a test server and a client for its data API. */
export async function createTestApp(server: TestServer, name = `app-${Math.random().toString(36).slice(2, 8)}`): Promise<TestApp> {
  const { backendApps, accounts } = server.platform.services;
  const app = await backendApps.create((await accounts.findByLogin('alice'))!.id, name);
  const keys = (await backendApps.keys(app.appId))!;
  const apiURL = `${server.url}/data`;
  return {
    appId: app.appId,
    keys,
    apiURL,
    call: async (method, path, options = {}) => {
      const headers: Record<string, string> = { 'X-Parse-Application-Id': app.appId, ...options.headers };
      if (options.master) headers['X-Parse-Master-Key'] = keys.masterKey;
      else headers['X-Parse-REST-API-Key'] = keys.restKey;
      if (options.sessionToken) headers['X-Parse-Session-Token'] = options.sessionToken;
      let body = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(`${apiURL}${path}`, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
  };
}

/** `where` as a query string. */
export const whereQuery = (where: unknown, extra: Record<string, string> = {}) =>
  `?${new URLSearchParams({ where: JSON.stringify(where), ...extra })}`;

/**
 * Points the process's Parse JS SDK at `app` (its JavaScript and master keys, its data API). A 5xx
 * is always a Backyard bug, so the SDK fails at once instead of waiting out its five retries.
 */
export async function pointSdkAt(app: TestApp): Promise<void> {
  const { default: Parse } = await import('parse/node');
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  Parse.serverURL = app.apiURL;
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
}

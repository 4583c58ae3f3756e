import type { Logger } from '../log.js';
import { MASTER } from './auth/context.js';
import type { DataApps } from './apps.js';
import type { DataServices } from './services.js';
import { pathBelowMount } from './rest/routes/batch.js';
import type { DataRouter } from './rest/router.js';
import { isPlainObject } from './values.js';

/** One call of `callBackendAPI` (spec, "BackendApiCall"). */
export interface BackendApiCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body: Record<string, unknown>;
}

/** Thrown for a `url` the spec's rules refuse; the text tells what to send instead. */
export class BadCallError extends Error {}

/**
 * Runs data API calls on behalf of an app's owner, with its master key (docs/design.md, decision 6), in
 * order, through the same router as HTTP calls: the backend of `callBackendAPI` (operation 13).
 */
export class DataApiService {
  constructor(
    readonly apps: DataApps,
    /** Cloud code, webhooks, schedules, mail, sign-in providers and the outbound client (services.ts). */
    private readonly services: DataServices,
    private readonly router: DataRouter,
    private readonly mountUrl: () => string,
    private readonly log: Logger,
  ) {}

  /**
   * @returns one `{code, body}` per call, in order; a failing call answers its Parse error and the
   *   following calls still run.
   * @throws BadCallError for a url that is absolute or starts with /parse/ or /1/ (spec, rules for
   *   callBackendAPI, 2); nothing runs then.
   */
  async call(applicationId: string, calls: readonly BackendApiCall[]): Promise<Array<{ code: number; body: unknown }>> {
    const services = await this.apps.services(applicationId);
    const keys = await this.apps.keys(applicationId);
    if (!services || !keys) throw new Error(`no data engine for ${applicationId}`);
    const engine = services.engine;
    await engine.opened;
    const prepared = calls.map((c, i) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(c.url) || c.url.startsWith('//')) {
        throw new BadCallError(`requests[${i}].url must be a path relative to the data API root, such as /classes/ToDo, not an absolute URL.`);
      }
      const relative = c.url.startsWith('/') ? c.url : `/${c.url}`;
      if (/^\/(parse|1)(\/|$)/.test(relative)) {
        throw new BadCallError(`requests[${i}].url must not start with /parse/ or /1/: drop the prefix and send ${relative.replace(/^\/(parse|1)/, '') || '/'}.`);
      }
      const url = new URL(relative, 'http://call');
      return { call: c, path: pathBelowMount(decodeURI(url.pathname), new URL(this.mountUrl()).pathname).replace(/\/+$/, '') || '/', query: Object.fromEntries(url.searchParams) };
    });
    const registry = await this.services.cloud.registry(applicationId);
    const responses: Array<{ code: number; body: unknown }> = [];
    for (const { call, path, query } of prepared) {
      const isRead = call.method === 'GET';
      const res = await this.router.dispatch({
        registry,
        method: call.method,
        path,
        query: isRead && isPlainObject(call.body) ? { ...query, ...call.body } : query,
        body: isRead ? undefined : call.body,
        auth: MASTER,
        engine,
        services,
        keys,
        apps: this.apps,
        context: this.services,
        mountUrl: this.mountUrl(),
      });
      responses.push({ code: res.status, body: res.body });
    }
    if (calls.some((c) => c.method !== 'GET')) await engine.durable();
    this.log.debug({ app: applicationId, calls: calls.length }, 'callBackendAPI');
    return responses;
  }
}

import type { BackendApp } from '../../platform/backendapps/service.js';
import type { BackendApiCall } from '../../data/service.js';
import type { Dashboard } from './context.js';
import { html, path, type Html } from './html.js';
import { tabs, type Crumb } from './layout.js';

/** The sections of a Backend App's page. */
export type AppSection = 'overview' | 'data' | 'schema' | 'cloud' | 'console' | 'graphql' | 'jobs' | 'mail' | 'push' | 'settings';

/** The URL of a section of an app's page. */
export const appHref = (appId: string, section: AppSection = 'overview'): string =>
  section === 'overview' ? path`/dashboard/apps/${appId}` : path`/dashboard/apps/${appId}/` + section;

/** Breadcrumbs of an app's pages: Overview / <app name> / ... */
export const appCrumbs = (app: BackendApp, ...more: Crumb[]): Crumb[] => [
  { label: 'Overview', href: '/dashboard' },
  { label: app.appName, href: appHref(app.appId) },
  ...more,
];

/** The heading of every page of an app: its name, application id and section tabs. */
export function appHeading(app: BackendApp, current: AppSection, title?: string): Html {
  const items: Array<{ id: AppSection; label: string }> = [
    { id: 'overview', label: 'Overview' },
    { id: 'data', label: 'Data browser' },
    { id: 'schema', label: 'Schema' },
    { id: 'cloud', label: 'Cloud code' },
    { id: 'console', label: 'API console' },
    { id: 'graphql', label: 'GraphQL' },
    { id: 'jobs', label: 'Functions and jobs' },
    { id: 'mail', label: 'Mail' },
    { id: 'push', label: 'Push' },
    { id: 'settings', label: 'Server settings' },
  ];
  return html`<h1>${title ?? app.appName} <span class="muted small">Backend App</span></h1>
${tabs(`${app.appName} sections`, items.map((i) => ({ ...i, href: appHref(app.appId, i.id) })), current)}`;
}

/** One answer of the data API: its HTTP status and JSON body. */
export interface DataAnswer {
  code: number;
  body: unknown;
}

/**
 * Calls an app's data API with its master key, in process, through the same router as HTTP calls
 * (`DataApiService.call`, the backend of callBackendAPI). The caller checked that the app is the
 * session's own.
 */
export async function dataCalls(d: Dashboard, appId: string, calls: BackendApiCall[]): Promise<DataAnswer[]> {
  if (calls.length === 0) return [];
  return d.services.dataApi.call(appId, calls);
}

/** One data API call; see `dataCalls`. */
export async function dataCall(d: Dashboard, appId: string, method: BackendApiCall['method'], url: string, body: Record<string, unknown> = {}): Promise<DataAnswer> {
  const [answer] = await dataCalls(d, appId, [{ method, url, body }]);
  return answer!;
}

/** The Parse error text of a failed answer (`{code, error}`), or a generic sentence. */
export function errorText(answer: DataAnswer): string {
  const body = answer.body as { error?: unknown; code?: unknown } | undefined;
  if (body && typeof body.error === 'string') return `${body.error}${typeof body.code === 'number' ? ` (Parse error ${body.code})` : ''}`;
  return `The data API answered ${answer.code}.`;
}

/** A class of the app's schema as `/schemas` answers it. */
export interface SchemaClass {
  className: string;
  fields: Record<string, import('../../data/types.js').FieldType>;
  classLevelPermissions: Record<string, unknown>;
  indexes: Record<string, Record<string, number>>;
}

/** The app's classes (from `/schemas`), with their object counts when `withCounts`. */
export async function classesOf(d: Dashboard, appId: string, withCounts = true): Promise<Array<SchemaClass & { count?: number }>> {
  const schemas = await dataCall(d, appId, 'GET', '/schemas');
  const classes = ((schemas.body as { results?: SchemaClass[] }).results ?? []).slice().sort((a, b) => a.className.localeCompare(b.className));
  if (!withCounts) return classes;
  const counts = await dataCalls(
    d,
    appId,
    classes.map((c) => ({ method: 'GET' as const, url: path`/classes/${c.className}?count=1&limit=0`, body: {} })),
  );
  return classes.map((c, i) => ({ ...c, count: (counts[i]?.body as { count?: number } | undefined)?.count }));
}

/** The list of classes beside the data browser and the schema: each with its count, the current one marked. */
export function classList(appId: string, classes: Array<{ className: string; count?: number }>, current: string | undefined, section: 'data' | 'schema'): Html {
  if (classes.length === 0) return html`<p class="muted">No classes yet.</p>`;
  return html`<nav aria-label="Classes"><ul class="side chips">${classes.map(
    (c) =>
      html`<li><a href="${appHref(appId, section)}/${encodeURIComponent(c.className)}"${c.className === current ? html` aria-current="page"` : ''}><span>${c.className}</span>${
        c.count === undefined ? '' : html`<span class="n">${c.count.toLocaleString('en-US')}<span class="sr"> objects</span></span>`
      }</a></li>`,
  )}</ul></nav>`;
}

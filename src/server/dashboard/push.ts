import type { FastifyInstance } from 'fastify';
import { appCrumbs, appHeading, appHref, dataCall, errorText } from './appframe.js';
import { ownApp, sendPage, sessionOf, type Dashboard } from './context.js';
import { html } from './html.js';
import { badge, notice } from './layout.js';
import { objectHref } from './values.js';

type AppParams = { Params: { appId: string } };

interface PushStatus {
  objectId: string;
  pushTime?: string;
  query?: string;
  payload?: string;
  status?: string;
  numSent?: number;
  numFailed?: number;
  sentPerType?: Record<string, number>;
  failedPerType?: Record<string, number>;
  errorMessage?: { failures?: Array<{ deviceType: string; error: string; count: number }>; message?: string };
}

const statusBadge = (status: string | undefined) =>
  status === 'succeeded' ? badge('ok', 'succeeded') : status === 'failed' ? badge('bad', 'failed') : status === 'running' || status === 'pending' ? badge('run', status) : badge('off', status ?? 'unknown');

const perType = (counts: Record<string, number> | undefined) => Object.entries(counts ?? {}).map(([type, n]) => `${type} ${n}`).join(', ');

/** The text of a push's alert, from its stored payload. */
function alertOf(payload: string | undefined): string {
  try {
    const data = JSON.parse(payload ?? '{}') as { alert?: unknown; title?: unknown };
    return [data.title, data.alert].filter((x) => typeof x === 'string').join(': ') || (payload ?? '');
  } catch {
    return payload ?? '';
  }
}

/**
 * The app's pushes: its `_PushStatus` objects, newest first,
 * with what each targeted, how many devices got it per type, and why the others did not.
 */
export function pushRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/apps/:appId/push', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const appId = backendApp.appId;
    const answer = await dataCall(d, appId, 'GET', '/classes/_PushStatus?order=-createdAt&limit=50');
    const pushes = answer.code === 200 ? ((answer.body as { results: PushStatus[] }).results ?? []) : [];
    const installations = await dataCall(d, appId, 'GET', '/classes/_Installation?count=1&limit=0');
    const count = installations.code === 200 ? (installations.body as { count: number }).count : undefined;
    return sendPage(reply, 200, {
      title: `Push · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Push' }),
      heading: appHeading(backendApp, 'push'),
      body: html`<section aria-labelledby="push-heading">
  <h2 id="push-heading">Push notifications</h2>
  <p class="hint">${count === undefined ? '' : `${count} installation${count === 1 ? '' : 's'} registered. `}Pushes are sent with <code>POST /push</code> and the master key
    (<code>Parse.Push.send</code>), through the services of the app's <code>push</code> setting on its <a href="${appHref(appId, 'settings')}">server settings</a>.
    <a href="${appHref(appId, 'push')}">Refresh</a></p>
  ${answer.code === 200 ? '' : notice('bad', errorText(answer))}
  ${pushes.length
    ? html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Sent</th><th scope="col">Alert</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Delivered</th><th scope="col">Failed</th></tr></thead>
    <tbody>${pushes.map(
      (p) => html`<tr><td><a href="${objectHref(appId, '_PushStatus', p.objectId)}">${(p.pushTime ?? '').replace('T', ' ').slice(0, 19)}</a></td>
      <td>${alertOf(p.payload)}</td><td class="cell mono">${p.query ?? ''}</td><td>${statusBadge(p.status)}</td>
      <td>${p.numSent ?? 0}${p.sentPerType && Object.keys(p.sentPerType).length ? html` <span class="muted small">(${perType(p.sentPerType)})</span>` : ''}</td>
      <td>${p.numFailed ?? 0}${p.errorMessage?.failures?.length ? html`<ul class="small">${p.errorMessage.failures.map((f) => html`<li>${f.deviceType}: ${f.error} (${f.count})</li>`)}</ul>` : ''}${p.errorMessage?.message ? html`<div class="small">${p.errorMessage.message}</div>` : ''}</td></tr>`,
    )}</tbody></table></div>`
    : html`<p class="empty">No push has been sent yet.</p>`}
</section>`,
    });
  });
}

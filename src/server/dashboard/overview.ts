import type { FastifyInstance } from 'fastify';
import { appHref, dataCall } from './appframe.js';
import { flashOf, sendPage, sessionOf, type Dashboard } from './context.js';
import { html, path, plural, when } from './html.js';
import { badge } from './layout.js';
import { webAppBadge, webAppHref } from './webapps.js';

/** The URL of a development environment's page. */
export const environmentHref = (environmentId: string): string => path`/dashboard/environments/${environmentId}`;

/**
 * The overview (`/dashboard`): the account's Backend Apps, Web Apps and development environments,
 * each with its state at a glance.
 */
export function overviewRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get('/', async (request, reply) => {
    const session = sessionOf(request);
    const accountId = session.account.id;
    const summaries = await d.services.backendApps.list(accountId);
    const apps = (await Promise.all(summaries.map((summary) => d.services.backendApps.get(accountId, summary.appId)))).filter((a) => a !== undefined);
    const classCounts = await Promise.all(
      apps.map(async (a) => {
        try {
          const answer = await dataCall(d, a.appId, 'GET', '/schemas');
          return ((answer.body as { results?: unknown[] }).results ?? []).length;
        } catch {
          return undefined;
        }
      }),
    );
    const environments = (await d.services.devenvs.list(accountId)).reverse();
    const activities = await Promise.all(environments.map((e) => d.services.devenvs.activity(accountId, e.id)));
    const webApps = await Promise.all((await d.services.webApps.list(accountId)).map((w) => d.services.webApps.get(accountId, w.appId)));

    const appCards = apps.length
      ? html`<ul class="cards">${apps.map(
          (a, i) => html`<li class="card">
  <h3><a href="${appHref(a.appId)}">${a.appName}</a></h3>
  <p class="small muted">Application id <code>${a.appId}</code></p>
  <p class="small">${classCounts[i] === undefined ? '' : plural(classCounts[i]!, 'class', 'classes')} ·
    Hosting ${a.publicWebHostingURL ? html`${badge('ok', 'active')} <a href="${a.publicWebHostingURL}">${a.publicWebHostingURL}</a>` : badge('off', 'not active')}</p>
</li>`,
        )}</ul>`
      : html`<p class="empty">No Backend Apps yet. Ask your assistant to create one (the <code>createBackendApp</code> tool).</p>`;

    const webAppCards = webApps.length
      ? html`<ul class="cards">${webApps.map(
          (w) => html`<li class="card">
  <h3><a href="${webAppHref(w.appId)}">${w.appName}</a></h3>
  <p class="small">${webAppBadge(w.status)} <a href="${w.appURL}" target="_blank" rel="noopener">${w.appURL}</a></p>
  <p class="small muted">From <code>${w.repositoryOwnerLogin}/${w.repositoryName}</code>, branch <code>${w.branchName}</code></p>
</li>`,
        )}</ul>`
      : html`<p class="empty">No Web Apps yet. Your assistant deploys one from a repository with <code>createWebApp</code>.</p>`;

    const environmentCards = environments.length
      ? html`<ul class="cards">${environments.map((e, i) => {
          const activity = activities[i]!;
          const latest = activity.latest;
          return html`<li class="card">
  <h3><a href="${environmentHref(e.id)}">${e.chatTitle}</a></h3>
  <p class="small muted">Created ${when(e.createdAt)}</p>
  <p class="small">${plural(activity.total, 'command')}${activity.running ? html` · ${badge('run', `${activity.running} running`)}` : ''}</p>
  ${latest
    ? html`<p class="small">Latest: <code>${latest.command.length > 60 ? `${latest.command.slice(0, 60)}…` : latest.command}</code>
      ${latest.status === 'running' ? badge('run', 'running') : badge(latest.exitCode === 0 ? 'ok' : 'bad', `exit ${latest.exitCode ?? '?'}`)}</p>`
    : ''}
</li>`;
        })}</ul>`
      : html`<p class="empty">No development environments yet. Your assistant makes one with <code>createDevelopmentEnvironment</code>.</p>`;

    // Said where the owner looks, not only in the server log: unconfined cloud code reaches the host.
    const confinement = d.services.cloud.confinement();
    const unconfined =
      confinement.mode === 'none'
        ? html`<p class="notice warn" role="status" id="confinement">Cloud code is not confined by the kernel on this machine (${confinement.why ?? 'unknown reason'}): it runs under Node's permission model alone and can reach local ports, sockets and processes${confinement.why === 'BACKYARD_CLOUD_CONFINEMENT=none' ? '' : ', and only while this server has one account'}. Install bubblewrap (apt-get install bubblewrap), or set BACKYARD_CLOUD_CONFINEMENT=sandbox to refuse to run it unconfined.</p>`
        : confinement.why
          ? html`<p class="notice bad" role="status" id="confinement">Cloud code does not run: BACKYARD_CLOUD_CONFINEMENT=sandbox, and no sandbox can be made here (${confinement.why}).</p>`
          : '';
    return sendPage(reply, 200, {
      title: 'Overview',
      session,
      heading: html`<h1>Overview</h1>`,
      body: html`${flashOf(d, request)}${unconfined}
<section aria-labelledby="apps-heading"><h2 id="apps-heading">Backend Apps <span class="muted small">(${apps.length})</span></h2>${appCards}</section>
<section aria-labelledby="webapps-heading"><h2 id="webapps-heading">Web Apps <span class="muted small">(${webApps.length})</span></h2>${webAppCards}</section>
<section aria-labelledby="envs-heading"><h2 id="envs-heading">Development environments <span class="muted small">(${environments.length})</span></h2>${environmentCards}</section>`,
    });
  });
}

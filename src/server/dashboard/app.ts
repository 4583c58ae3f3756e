import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BackendApp } from '../../platform/backendapps/service.js';
import { appHeading, appHref, classesOf } from './appframe.js';
import { flashOf, ownApp, redirectWith, sendPage, sessionOf, type Dashboard } from './context.js';
import { html, plural, type Html } from './html.js';
import { badge, csrfField } from './layout.js';
import { lifecycleButton } from './lifecycle.js';
import { parseDataBrowserHref } from './parse.js';

type AppParams = { Params: { appId: string } };

/** A value with a copy button; `id` names the element copied. */
const copyable = (id: string, value: string, label: string): Html =>
  html`<code id="${id}">${value}</code> <button type="button" class="secondary small" data-copy="${id}" aria-label="Copy ${label}">Copy</button>`;

async function overviewPage(d: Dashboard, request: FastifyRequest, reply: FastifyReply, app: BackendApp, showSecrets: boolean): Promise<FastifyReply> {
  const session = sessionOf(request);
  const keys = (await d.services.backendApps.keys(app.appId))!;
  const classes = await classesOf(d, app.appId);
  const objects = classes.reduce((n, c) => n + (c.count ?? 0), 0);
  const secretRows: Array<[string, string, string]> = [
    ['Master key', 'master-key', keys.masterKey],
    ['Webhook key', 'webhook-key', keys.webhookKey],
    ['File key', 'file-key', keys.fileKey],
  ];
  const sdk = `Parse.initialize(${JSON.stringify(app.appId)}, ${JSON.stringify(app.javascriptKey)});\nParse.serverURL = ${JSON.stringify(app.apiURL)};`;
  return sendPage(reply, 200, {
    title: app.appName,
    session,
    crumbs: [{ label: 'Overview', href: '/dashboard' }, { label: app.appName }],
    heading: appHeading(app, 'overview'),
    body: html`${flashOf(d, request)}
<div class="grid">
<section aria-labelledby="urls-heading" class="panel">
  <h2 id="urls-heading">Addresses</h2>
  <dl class="facts">
    <dt>Application id</dt><dd>${copyable('app-id', app.appId, 'application id')}</dd>
    <dt>Data API (serverURL)</dt><dd>${copyable('api-url', app.apiURL, 'data API address')}</dd>
    <dt>SDK script</dt><dd><code>${d.services.urls.sdkScript}</code></dd>
    <dt>This page</dt><dd><code>${app.dashboardURL}</code></dd>
  </dl>
</section>
<section aria-labelledby="hosting-heading" class="panel">
  <h2 id="hosting-heading">Web hosting</h2>
  ${app.publicWebHostingURL
    ? html`<p>${badge('ok', 'active')} The <code>public/</code> folder of the cloud code is served at</p>
       <p><a href="${app.publicWebHostingURL}" rel="noopener" target="_blank">${app.publicWebHostingURL}</a></p>`
    : html`<p>${badge('off', 'not active')} The <code>public/</code> folder of the cloud code is not served yet.</p>
       <form method="post" action="${appHref(app.appId)}/hosting">${csrfField(session)}<button type="submit">Activate web hosting</button></form>`}
  <h3>Data</h3>
  <p>${plural(classes.length, 'class', 'classes')}, ${plural(objects, 'object')}. <a href="${appHref(app.appId, 'data')}">Open the data browser</a></p>
  <p><a class="button secondary" id="open-parse-dashboard" href="${parseDataBrowserHref(app)}">Open in Parse Dashboard</a></p>
  <p class="hint">The Parse Dashboard you know, with this app's keys: only you, signed in here, can open it.</p>
  <h3>Delete</h3>
  <p class="hint">Deletes the app's keys, data, files, cloud code and hosting for good.</p>
  ${lifecycleButton(session, `${appHref(app.appId)}/delete`, 'Delete this app', `Delete ${app.appName} for good, with all its data, files and cloud code? This cannot be undone.`)}
</section>
</div>
<section aria-labelledby="keys-heading">
  <h2 id="keys-heading">Keys</h2>
  <p class="hint">Client keys go in apps: the JavaScript key in web pages, the client key in mobile apps. Keep the REST API key on servers, and the master key to yourself: it bypasses every permission.</p>
  <div class="table-wrap"><table>
    <caption class="sr">Keys of ${app.appName}</caption>
    <thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
    <tbody>
      <tr><th scope="row">JavaScript key</th><td>${copyable('javascript-key', app.javascriptKey, 'JavaScript key')}</td></tr>
      <tr><th scope="row">REST API key</th><td>${copyable('rest-key', app.restKey, 'REST API key')}</td></tr>
      <tr><th scope="row">Client key</th><td>${copyable('client-key', app.clientKey, 'client key')}</td></tr>
      <tr><th scope="row">.NET key</th><td>${copyable('dotnet-key', app.dotnetKey, '.NET key')}</td></tr>
      ${secretRows.map(
        ([label, id, value]) =>
          html`<tr><th scope="row">${label}</th><td>${showSecrets ? copyable(id, value, label) : html`<span class="muted" id="${id}">hidden</span>`}</td></tr>`,
      )}
    </tbody>
  </table></div>
  ${showSecrets
    ? html`<p><a href="${appHref(app.appId)}">Hide the master key</a></p>`
    : html`<form method="post" action="${appHref(app.appId)}/keys">${csrfField(session)}<button type="submit" class="secondary">Show the master key</button></form>`}
</section>
<section aria-labelledby="sdk-heading">
  <h2 id="sdk-heading">Connect a web page</h2>
  <pre id="sdk-snippet">&lt;script src="${d.services.urls.sdkScript}"&gt;&lt;/script&gt;
${sdk}</pre>
  <button type="button" class="secondary small" data-copy="sdk-snippet">Copy</button>
</section>`,
  });
}

/** A Backend App's overview (`dashboardURL`): addresses, hosting, keys (master key on request). */
export function appRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/apps/:appId', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return overviewPage(d, request, reply, backendApp, false);
  });

  // The master key shows only in the answer to this post: never in a page that a GET can fetch.
  app.post<AppParams>('/apps/:appId/keys', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return overviewPage(d, request, reply, backendApp, true);
  });

  app.post<AppParams>('/apps/:appId/hosting', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const url = (await d.services.backendApps.activateHosting(session.account.id, backendApp.appId))!;
    return redirectWith(d, reply, session, appHref(backendApp.appId), { kind: 'ok', title: `Web hosting is active at ${url}`, lines: [] });
  });
}

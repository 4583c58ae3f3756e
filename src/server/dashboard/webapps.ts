import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ManagementError } from '../../errors.js';
import type { WebApp } from '../../platform/webapps/service.js';
import { flashOf, formOf, redirectWith, sendNotFound, sendPage, sessionOf, type Dashboard } from './context.js';
import { openEventStream } from './events.js';
import { html, path, when, type Html } from './html.js';
import { badge, csrfField } from './layout.js';
import { lifecycleButton } from './lifecycle.js';
import { saveSettings, savedText, settingsForm, type SettingsProblem } from './webappSettings.js';

type AppParams = { Params: { appId: string } };
type DeploymentParams = { Params: { appId: string; deploymentId: string } };

/** How often a live deployment stream looks for news, in milliseconds. */
const POLL_MS = 700;
/** How many rows of each log a page and a stream show at most. */
const BUILD_ROWS = 2000;
const CONTAINER_ROWS = 300;

const FINISHED = new Set(['active', 'failed', 'superseded']);

/** The dashboard's URL of a Web App. */
export const webAppHref = (appId: string): string => path`/dashboard/web-apps/${appId}`;

const deploymentHref = (appId: string, deploymentId: string) => path`/dashboard/web-apps/${appId}/deployments/${deploymentId}`;

/** A Web App's state as a badge. */
export const webAppBadge = (status: WebApp['status']): Html =>
  badge(status === 'running' ? 'ok' : status === 'deploying' ? 'run' : status === 'failed' ? 'bad' : 'off', status);

/** A deployment's state as a badge; `id` lets the live script update it. */
const deploymentBadge = (status: string, id?: string): Html =>
  badge(status === 'active' ? 'ok' : status === 'failed' ? 'bad' : status === 'superseded' ? 'off' : 'run', status, id);

/** One of the session's own Web Apps, or undefined after answering 404. */
async function ownWebApp(d: Dashboard, request: FastifyRequest, reply: FastifyReply, appId: string): Promise<WebApp | undefined> {
  const session = sessionOf(request);
  try {
    return await d.services.webApps.get(session.account.id, appId);
  } catch (error) {
    if (!(error instanceof ManagementError) || error.kind !== 'notFound') throw error;
    sendNotFound(reply, session, 'Web App');
    return undefined;
  }
}

/** A log row as one line of text: `hh:mm:ss message`, stderr marked. */
export const logLine = (row: { source: string; message: string; time: string }): string =>
  `${row.time.slice(11, 19)}  ${row.source === 'stderr' ? '[stderr] ' : ''}${row.message}\n`;

const crumbs = (app: WebApp, ...more: Array<{ label: string; href?: string }>) => [{ label: 'Overview', href: '/dashboard' }, { label: app.appName, href: webAppHref(app.appId) }, ...more];

/**
 * Web Apps: an app's status, `appURL`, repository, its settings (branch, folder,
 * port, health check, auto-deploy; editable), environment variable keys (values can be set, never
 * shown), its deployments, a redeploy button, and each deployment's build and container logs, live
 * over server-sent events while it runs. Changes go through the Web App service (`update`,
 * `deploy`) as the tools do; settings through the updateWebApp operation and its input schema.
 */
export function webAppRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/web-apps/:appId', async (request, reply) => {
    const webApp = await ownWebApp(d, request, reply, request.params.appId);
    if (!webApp) return reply;
    return sendWebAppPage(d, request, reply, webApp);
  });

  app.get<DeploymentParams>('/web-apps/:appId/deployments/:deploymentId', async (request, reply) => {
    const session = sessionOf(request);
    const webApp = await ownWebApp(d, request, reply, request.params.appId);
    if (!webApp) return reply;
    let deployment;
    try {
      deployment = await d.services.webApps.deployment(session.account.id, webApp.appId, request.params.deploymentId, {
        includeBuildLogs: true,
        buildLogsLimit: BUILD_ROWS,
        includeContainersLogs: true,
        containersLogsLimit: CONTAINER_ROWS,
      });
    } catch (error) {
      if (error instanceof ManagementError && error.kind === 'notFound') return sendNotFound(reply, session, 'deployment');
      throw error;
    }
    // Only for its trigger, which getDeployment does not answer; looked for among the latest 1000.
    const summary = (await d.services.webApps.deployments(session.account.id, webApp.appId, 1_000)).find((x) => x.id === deployment.id);
    const live = !FINISHED.has(deployment.status);
    return sendPage(reply, 200, {
      title: `Deployment · ${webApp.appName}`,
      session,
      crumbs: crumbs(webApp, { label: 'Deployment' }),
      heading: html`<h1>Deployment of ${webApp.appName}</h1>`,
      body: html`${flashOf(d, request)}
<div id="deployment"${live ? html` data-deploy-events="${deploymentHref(webApp.appId, deployment.id)}/events" data-state="running"` : html` data-state="finished"`}>
<dl class="facts">
  <dt>Status</dt><dd><span aria-live="polite">${deploymentBadge(deployment.status, 'deploy-status')}</span></dd>
  <dt>Commit</dt><dd><code id="deploy-commit">${deployment.commitSHA || '—'}</code></dd>
  <dt>Started</dt><dd>${when(deployment.createdAt)}${summary ? ` (${summary.trigger})` : ''}</dd>
  <dt>Deployment id</dt><dd><code>${deployment.id}</code></dd>
  <dt>App URL</dt><dd><a href="${webApp.appURL}" target="_blank" rel="noopener">${webApp.appURL}</a></dd>
</dl>
<div id="deploy-error" role="alert">${deployment.error ? html`<div class="notice bad"><strong>Failed:</strong> ${deployment.error}</div>` : ''}</div>
<h2 id="build-heading">Build log</h2>
<pre class="output" id="build-logs" tabindex="0" aria-labelledby="build-heading">${deployment.buildLogs.map(logLine).join('')}</pre>
<h2 id="container-heading">Container log</h2>
<pre class="output" id="container-logs" tabindex="0" aria-labelledby="container-heading">${deployment.containersLogs.map(logLine).join('')}</pre>
${live ? html`<p class="hint" data-live-hint>The logs update live while the deployment runs.</p>` : ''}
</div>
<p><a href="${webAppHref(webApp.appId)}">Back to ${webApp.appName}</a></p>`,
    });
  });

  // Server-sent events: `status`, `build` (new rows), `containers` (the latest rows), then `end`.
  app.get<DeploymentParams>('/web-apps/:appId/deployments/:deploymentId/events', async (request, reply) => {
    const session = sessionOf(request);
    const { appId, deploymentId } = request.params;
    const read = () =>
      d.services.webApps.deployment(session.account.id, appId, deploymentId, {
        includeBuildLogs: true,
        buildLogsLimit: BUILD_ROWS,
        includeContainersLogs: true,
        containersLogsLimit: CONTAINER_ROWS,
      });
    let first;
    try {
      first = await read();
    } catch (error) {
      if (error instanceof ManagementError && error.kind === 'notFound') return reply.code(404).type('text/plain; charset=utf-8').send('No such deployment.');
      throw error;
    }

    const { res, send } = openEventStream(d, reply);
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      stopped = true;
      clearTimeout(timer);
      d.streams.delete(res);
      if (!res.writableEnded) res.end();
    };
    request.raw.on('close', stop);

    let status = '';
    // -1: the first event replaces what the page showed when it was rendered.
    let buildRows = -1;
    let containerText: string | undefined;
    const publish = (now: Awaited<ReturnType<typeof read>>) => {
      if (now.status !== status) {
        status = now.status;
        send('status', { status: now.status, error: now.error, commitSHA: now.commitSHA });
      }
      const build = now.buildLogs;
      if (build.length < buildRows || buildRows < 0) {
        send('build', { reset: true, text: build.map(logLine).join('') });
        buildRows = build.length;
      } else if (build.length > buildRows) {
        send('build', { text: build.slice(buildRows).map(logLine).join('') });
        buildRows = build.length;
      }
      const containers = now.containersLogs.map(logLine).join('');
      if (containers !== containerText) {
        containerText = containers;
        send('containers', { text: containers });
      }
    };
    publish(first);
    const tick = async () => {
      if (stopped) return;
      try {
        const now = await read();
        if (stopped) return;
        publish(now);
        if (FINISHED.has(now.status)) {
          send('end', { status: now.status });
          return stop();
        }
      } catch (error) {
        d.platform.log.warn({ err: error, deploymentId }, 'dashboard: could not follow a deployment');
        return stop();
      }
      timer = setTimeout(() => void tick(), POLL_MS);
    };
    if (FINISHED.has(first.status)) {
      send('end', { status: first.status });
      stop();
    } else timer = setTimeout(() => void tick(), POLL_MS);
    return reply;
  });

  app.post<AppParams>('/web-apps/:appId/deploy', async (request, reply) => {
    const session = sessionOf(request);
    const webApp = await ownWebApp(d, request, reply, request.params.appId);
    if (!webApp) return reply;
    try {
      const deployment = await d.services.webApps.deploy(session.account, webApp.appId);
      return redirectWith(d, reply, session, deploymentHref(webApp.appId, deployment.id), { kind: 'ok', title: 'A new deployment started.', lines: [] });
    } catch (error) {
      if (!(error instanceof ManagementError)) throw error;
      return redirectWith(d, reply, session, webAppHref(webApp.appId), { kind: 'bad', title: `No deployment started: ${error.message}`, lines: [] });
    }
  });

  app.post<AppParams>('/web-apps/:appId/settings', async (request, reply) => {
    const session = sessionOf(request);
    const webApp = await ownWebApp(d, request, reply, request.params.appId);
    if (!webApp) return reply;
    const result = await saveSettings(d, session, webApp, formOf(request));
    if (!result.ok) return sendWebAppPage(d, request, reply, webApp, result.problem);
    return redirectWith(d, reply, session, webAppHref(webApp.appId), { kind: 'ok', title: savedText(result), lines: [] });
  });

  app.post<AppParams>('/web-apps/:appId/variables', async (request, reply) => {
    const session = sessionOf(request);
    const webApp = await ownWebApp(d, request, reply, request.params.appId);
    if (!webApp) return reply;
    const form = formOf(request);
    const key = (form.key ?? '').trim();
    return changeVariables(d, reply, session, webApp, { setEnvironmentVariables: [{ key, value: form.value ?? '' }] }, `Set ${key}.`);
  });

  app.post<AppParams>('/web-apps/:appId/variables/remove', async (request, reply) => {
    const session = sessionOf(request);
    const webApp = await ownWebApp(d, request, reply, request.params.appId);
    if (!webApp) return reply;
    const key = formOf(request).key ?? '';
    return changeVariables(d, reply, session, webApp, { removeEnvironmentVariablesKeys: [key] }, `Removed ${key}.`);
  });
}

/**
 * Sends a Web App's page: status, appURL, repository, the settings form, variable keys and
 * deployments. With `problem` (a refused settings change) it answers 400 and the form keeps the
 * values as sent.
 */
async function sendWebAppPage(d: Dashboard, request: FastifyRequest, reply: FastifyReply, webApp: WebApp, problem?: SettingsProblem): Promise<FastifyReply> {
  const session = sessionOf(request);
  const deployments = await d.services.webApps.deployments(session.account.id, webApp.appId);
  const here = webAppHref(webApp.appId);
  return sendPage(reply, problem ? 400 : 200, {
    title: webApp.appName,
    session,
    crumbs: [{ label: 'Overview', href: '/dashboard' }, { label: webApp.appName }],
    heading: html`<h1>${webApp.appName} <span class="muted small">Web App</span></h1>`,
    body: html`${flashOf(d, request)}
<div class="actions">
  <span>Status ${webAppBadge(webApp.status)}</span>
  <a class="button secondary" href="${webApp.appURL}" target="_blank" rel="noopener">Open ${webApp.appURL}</a>
  <form method="post" action="${here}/deploy" class="inline">${csrfField(session)}<button type="submit">Redeploy</button></form>
  ${webApp.status === 'stopped'
    ? lifecycleButton(session, `${here}/start`, 'Start', `Start ${webApp.appName} again?`, false)
    : lifecycleButton(session, `${here}/stop`, 'Stop', `Stop ${webApp.appName}? Its address stops answering until it is started again.`)}
  ${lifecycleButton(session, `${here}/delete`, 'Delete', `Delete ${webApp.appName} for good: its containers, images, deployments, logs and address? This cannot be undone.`)}
</div>
${webApp.error ? html`<div class="notice bad" role="alert"><strong>The last deployment failed:</strong> ${webApp.error}</div>` : ''}
<div class="grid">
<section aria-labelledby="source-heading" class="panel">
  <h2 id="source-heading">Source and settings</h2>
  <dl class="facts">
    <dt>App URL</dt><dd><a href="${webApp.appURL}" target="_blank" rel="noopener">${webApp.appURL}</a></dd>
    <dt>Repository</dt><dd><code>${webApp.repositoryOwnerLogin}/${webApp.repositoryName}</code></dd>
  </dl>
  ${settingsForm(session, `${here}/settings`, webApp, problem)}
</section>
<section aria-labelledby="variables-heading" class="panel">
  <h2 id="variables-heading">Environment variables</h2>
  <p class="hint">Values are never shown. Setting or removing one starts a new deployment.</p>
  ${webApp.environmentVariablesKeys.length
    ? html`<ul class="side">${webApp.environmentVariablesKeys.map(
        (key) => html`<li><span class="row"><code>${key}</code>
          <form method="post" action="${here}/variables/remove" class="inline" data-confirm="Remove the variable ${key}? A new deployment starts.">${csrfField(session)}<input type="hidden" name="key" value="${key}"><button type="submit" class="danger small" aria-label="Remove ${key}">Remove</button></form></span></li>`,
      )}</ul>`
    : html`<p class="muted">No variables.</p>`}
  <form method="post" action="${here}/variables" class="row">
    ${csrfField(session)}
    <div class="field"><label for="variable-key">Key</label><input id="variable-key" name="key" required spellcheck="false" autocomplete="off"></div>
    <div class="field"><label for="variable-value">Value</label><input id="variable-value" name="value" type="password" autocomplete="new-password"></div>
    <div class="field"><button type="submit">Set variable</button></div>
  </form>
</section>
</div>
<section aria-labelledby="deployments-heading">
<h2 id="deployments-heading">Deployments</h2>
${deployments.length
  ? html`<div class="table-wrap"><table>
  <thead><tr><th scope="col">Deployment</th><th scope="col">Status</th><th scope="col">Commit</th><th scope="col">Trigger</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Error</th></tr></thead>
  <tbody>${deployments.map(
    (dep) => html`<tr><td class="cell mono"><a href="${deploymentHref(webApp.appId, dep.id)}">${dep.id.slice(0, 8)}<span class="sr"> logs</span></a></td><td>${deploymentBadge(dep.status)}</td>
    <td class="mono">${dep.commitSHA.slice(0, 10)}</td><td>${dep.trigger}</td><td>${when(dep.createdAt)}</td><td>${when(dep.finishedAt)}</td><td class="cell" title="${dep.error}">${dep.error}</td></tr>`,
  )}</tbody></table></div>`
  : html`<p class="empty">No deployment yet.</p>`}
</section>`,
  });
}

/** Applies a change of variables through `WebAppService.update`; the flash never carries a value. */
async function changeVariables(
  d: Dashboard,
  reply: FastifyReply,
  session: ReturnType<typeof sessionOf>,
  webApp: WebApp,
  change: { setEnvironmentVariables?: Array<{ key: string; value: string }>; removeEnvironmentVariablesKeys?: string[] },
  done: string,
): Promise<FastifyReply> {
  try {
    const updated = await d.services.webApps.update(session.account, webApp.appId, change);
    const started = updated.lastDeployment && updated.lastDeployment.id !== webApp.lastDeployment?.id;
    return redirectWith(d, reply, session, webAppHref(webApp.appId), {
      kind: 'ok',
      title: started ? `${done} A new deployment started.` : `${done} Nothing else changed.`,
      lines: [],
    });
  } catch (error) {
    if (!(error instanceof ManagementError)) throw error;
    return redirectWith(d, reply, session, webAppHref(webApp.appId), { kind: 'bad', title: `Nothing changed: ${error.message}`, lines: [] });
  }
}

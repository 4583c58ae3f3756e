import type { FastifyInstance } from 'fastify';
import { appCrumbs, appHeading, appHref, dataCall, errorText } from './appframe.js';
import { flashOf, formOf, ownApp, redirectWith, sendPage, sessionOf, type Dashboard } from './context.js';
import { html, path, when } from './html.js';
import { RUN_LIMITS } from '../../data/cloud/runs.js';
import { badge, csrfField, notice } from './layout.js';
import { runLabel, runOutput, runsTable } from './runs.js';
import { objectHref } from './values.js';
import { scheduleRoutes, schedulesSection } from './schedules.js';

type AppParams = { Params: { appId: string } };

interface JobRun {
  objectId: string;
  jobName?: string;
  status?: string;
  source?: string;
  message?: string;
  params?: unknown;
  createdAt?: string;
  finishedAt?: { iso?: string };
}

const statusBadge = (status: string | undefined) =>
  status === 'succeeded' ? badge('ok', 'succeeded') : status === 'failed' ? badge('bad', 'failed') : status === 'running' ? badge('run', 'running') : badge('off', status ?? 'unknown');

/**
 * Functions and jobs: what the app's cloud code registers, a form to start a job, the job schedules
 * (schedules.ts), the recent runs
 * of functions, triggers and jobs with their console output (`CloudRuntime.recentRuns`, kept in
 * memory), and the job runs recorded in `_JobStatus` with their state, message and output.
 */
export function jobRoutes(app: FastifyInstance, d: Dashboard): void {
  scheduleRoutes(app, d);
  app.get<AppParams>('/apps/:appId/jobs', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const appId = backendApp.appId;
    const registry = await d.services.cloud.registry(appId);
    const answer = await dataCall(d, appId, 'GET', '/classes/_JobStatus?order=-createdAt&limit=50');
    const runs = answer.code === 200 ? ((answer.body as { results: JobRun[] }).results ?? []) : [];
    const recent = d.services.cloud.recentRuns(appId);
    const byJobId = new Map(recent.filter((r) => r.jobId).map((r) => [r.jobId!, r]));

    return sendPage(reply, 200, {
      title: `Functions and jobs · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Functions and jobs' }),
      heading: appHeading(backendApp, 'jobs'),
      body: html`${flashOf(d, request)}
<div class="grid">
<section aria-labelledby="functions-heading" class="panel">
  <h2 id="functions-heading">Cloud functions</h2>
  ${registry.functions.length
    ? html`<ul>${registry.functions.map((f) => html`<li><code>${f}</code></li>`)}</ul><p class="hint">Call them from the <a href="${appHref(appId, 'console')}">API console</a> with <code>POST /functions/&lt;name&gt;</code>.</p>`
    : html`<p class="muted">The cloud code defines no functions.</p>`}
</section>
<section aria-labelledby="start-heading" class="panel">
  <h2 id="start-heading">Start a job</h2>
  ${registry.jobs.length
    ? html`<form method="post" action="${appHref(appId, 'jobs')}">
    ${csrfField(session)}
    <div class="field"><label for="job-name">Job</label><select id="job-name" name="job">${registry.jobs.map((j) => html`<option>${j}</option>`)}</select></div>
    <div class="field"><label for="job-params">Parameters (JSON)</label><textarea id="job-params" name="params" rows="3" spellcheck="false">{}</textarea></div>
    <button type="submit">Start job</button></form>`
    : html`<p class="muted">The cloud code defines no jobs (<code>Parse.Cloud.job</code>).</p>`}
</section>
</div>
${await schedulesSection(d, session, appId, registry.jobs)}
<section aria-labelledby="recent-heading">
  <h2 id="recent-heading">Recent runs</h2>
  <p class="hint">Functions, triggers and jobs, newest first, with what each wrote with <code>console.log</code> (and <code>warn</code>, <code>error</code>, ...) or <code>request.log</code>.
    Backyard keeps the last ${RUN_LIMITS.runs} function and trigger runs and the last ${RUN_LIMITS.jobRuns} job runs in memory, so a restart clears them. Output written outside a call, such as while the code loads, goes to the server's log only.
    <a href="${appHref(appId, 'jobs')}">Refresh</a></p>
  ${runsTable(appId, recent)}
</section>
<section aria-labelledby="runs-heading">
  <h2 id="runs-heading">Recent job runs</h2>
  ${answer.code === 200 ? '' : notice('bad', errorText(answer))}
  ${runs.length
    ? html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Message</th><th scope="col">Parameters</th><th scope="col">Output</th></tr></thead>
    <tbody>${runs.map(
      (r) => html`<tr><td><a href="${objectHref(appId, '_JobStatus', r.objectId)}"><code>${r.jobName ?? ''}</code></a></td><td>${statusBadge(r.status)}</td>
      <td>${when(r.createdAt)}</td><td>${when(r.finishedAt?.iso)}</td><td class="cell" title="${r.message ?? ''}">${r.message ?? ''}</td>
      <td class="cell mono">${r.params === undefined ? '' : JSON.stringify(r.params)}</td>
      <td class="run-output">${byJobId.has(r.objectId) ? runOutput(byJobId.get(r.objectId)!, runLabel(byJobId.get(r.objectId)!)) : html`<span class="muted">Not kept</span>`}</td></tr>`,
    )}</tbody></table></div>`
    : html`<p class="empty">No job has run yet.</p>`}
</section>`,
    });
  });

  app.post<AppParams>('/apps/:appId/jobs', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const form = formOf(request);
    const back = appHref(backendApp.appId, 'jobs');
    let params: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(form.params?.trim() || '{}') as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      params = parsed as Record<string, unknown>;
    } catch {
      return redirectWith(d, reply, session, back, { kind: 'bad', title: 'The job was not started: the parameters must be a JSON object.', lines: [] });
    }
    const answer = await dataCall(d, backendApp.appId, 'POST', path`/jobs/${form.job ?? ''}`, params);
    if (answer.code !== 200) return redirectWith(d, reply, session, back, { kind: 'bad', title: `The job was not started: ${errorText(answer)}`, lines: [] });
    return redirectWith(d, reply, session, back, { kind: 'ok', title: `Started the job ${form.job ?? ''}.`, lines: [] });
  });
}

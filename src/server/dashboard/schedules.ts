import type { FastifyInstance } from 'fastify';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import { appHref, dataCall, errorText } from './appframe.js';
import { formOf, ownApp, redirectWith, sessionOf, type Dashboard } from './context.js';
import { html, path, type Html } from './html.js';
import { csrfField, notice } from './layout.js';

type AppParams = { Params: { appId: string } };

interface Schedule {
  objectId: string;
  jobName?: string;
  description?: string;
  params?: string;
  startAfter?: string;
  repeatMinutes?: number;
  timeOfDay?: string;
  daysOfWeek?: unknown[];
  lastRun?: number;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** When a schedule runs, in words. */
function when(s: Schedule): string {
  if (s.repeatMinutes) return `every ${s.repeatMinutes} minute${s.repeatMinutes === 1 ? '' : 's'} from ${s.startAfter?.replace('T', ' ').slice(0, 16) ?? 'now'}`;
  if (s.timeOfDay) {
    const days = Array.isArray(s.daysOfWeek) && s.daysOfWeek.length
      ? s.daysOfWeek.every((d) => typeof d === 'boolean') ? DAYS.filter((_, i) => s.daysOfWeek![i]) : (s.daysOfWeek as number[]).map((d) => DAYS[d])
      : ['every day'];
    return `at ${s.timeOfDay} UTC, ${days.join(', ')}`;
  }
  return `once, at ${s.startAfter?.replace('T', ' ').slice(0, 16) ?? 'now'} UTC`;
}

/**
 * The "Scheduled jobs" section of the Functions and jobs page: the app's `_JobSchedule` objects
 * (which Backyard runs: src/data/cloud/scheduler.ts), a form to add one and a button to remove each.
 */
export async function schedulesSection(d: Dashboard, session: DashboardSession, appId: string, jobs: readonly string[]): Promise<Html> {
  const answer = await dataCall(d, appId, 'GET', '/cloud_code/jobs');
  const schedules = answer.code === 200 ? (answer.body as Schedule[]) : [];
  const base = `${appHref(appId, 'jobs')}/schedules`;
  return html`<section aria-labelledby="schedules-heading">
  <h2 id="schedules-heading">Scheduled jobs</h2>
  ${answer.code === 200 ? '' : notice('bad', errorText(answer))}
  ${schedules.length
    ? html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Job</th><th scope="col">When</th><th scope="col">Parameters</th><th scope="col">Last run</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
    <tbody>${schedules.map(
      (s) => html`<tr><td><code>${s.jobName ?? ''}</code>${s.description ? html`<div class="small muted">${s.description}</div>` : ''}</td><td>${when(s)}</td>
      <td class="cell mono">${s.params ?? '{}'}</td><td>${typeof s.lastRun === 'number' ? new Date(s.lastRun).toISOString().replace('T', ' ').slice(0, 19) : html`<span class="muted">not yet</span>`}</td>
      <td><form method="post" action="${base}/${encodeURIComponent(s.objectId)}/delete">${csrfField(session)}<button type="submit" class="secondary" aria-label="Remove the schedule of ${s.jobName ?? ''} (${when(s)})">Remove</button></form></td></tr>`,
    )}</tbody></table></div>`
    : html`<p class="empty">No job is scheduled.</p>`}
  ${jobs.length
    ? html`<form method="post" action="${base}" class="panel">
    ${csrfField(session)}
    <h3>Schedule a job</h3>
    <div class="field"><label for="schedule-job">Job</label><select id="schedule-job" name="jobName">${jobs.map((j) => html`<option>${j}</option>`)}</select></div>
    <div class="field"><label for="schedule-every">Repeat every (minutes)</label><input id="schedule-every" name="repeatMinutes" inputmode="decimal" aria-describedby="schedule-hint"></div>
    <div class="field"><label for="schedule-time">Or daily at (UTC, HH:MM)</label><input id="schedule-time" name="timeOfDay" placeholder="09:30" aria-describedby="schedule-hint"></div>
    <div class="field"><label for="schedule-start">Not before (ISO date, UTC; empty: now)</label><input id="schedule-start" name="startAfter" placeholder="2026-01-31T09:00:00Z"></div>
    <div class="field"><label for="schedule-params">Parameters (JSON)</label><textarea id="schedule-params" name="params" rows="2" spellcheck="false">{}</textarea></div>
    <p class="hint" id="schedule-hint">Give a repeat interval, or a time of day, or neither to run it once at the start date. Each run is listed under Recent job runs.</p>
    <button type="submit">Schedule</button></form>`
    : ''}
</section>`;
}

/** The forms of the section: add a schedule, remove one; each answers with the page and a message. */
export function scheduleRoutes(app: FastifyInstance, d: Dashboard): void {
  app.post<AppParams>('/apps/:appId/jobs/schedules', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const form = formOf(request);
    const back = appHref(backendApp.appId, 'jobs');
    const schedule: Record<string, unknown> = { jobName: form.jobName ?? '', params: form.params?.trim() || '{}' };
    if (form.repeatMinutes?.trim()) schedule.repeatMinutes = Number(form.repeatMinutes);
    if (form.timeOfDay?.trim()) schedule.timeOfDay = form.timeOfDay.trim();
    if (form.startAfter?.trim()) schedule.startAfter = form.startAfter.trim();
    const answer = await dataCall(d, backendApp.appId, 'POST', '/cloud_code/jobs', { job_schedule: schedule });
    if (answer.code !== 201) return redirectWith(d, reply, session, back, { kind: 'bad', title: `The job was not scheduled: ${errorText(answer)}`, lines: [] });
    return redirectWith(d, reply, session, back, { kind: 'ok', title: `Scheduled the job ${form.jobName ?? ''}.`, lines: [] });
  });

  app.post<{ Params: { appId: string; scheduleId: string } }>('/apps/:appId/jobs/schedules/:scheduleId/delete', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const back = appHref(backendApp.appId, 'jobs');
    const answer = await dataCall(d, backendApp.appId, 'DELETE', path`/cloud_code/jobs/${request.params.scheduleId}`);
    if (answer.code !== 200) return redirectWith(d, reply, session, back, { kind: 'bad', title: `The schedule was not removed: ${errorText(answer)}`, lines: [] });
    return redirectWith(d, reply, session, back, { kind: 'ok', title: 'Removed the schedule; the job runs no more on it.', lines: [] });
  });
}

import type { CloudRun, CloudRunLine } from '../../data/cloud/types.js';
import { RUN_LIMITS } from '../../data/cloud/runs.js';
import { html, plural, type Html } from './html.js';
import { badge } from './layout.js';
import { objectHref } from './values.js';

/** A time to the second for people: `2026-11-21 09:30:05 UTC`, in a `<time>` element. */
export const whenExactly = (iso: string): Html => html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;

/** A duration for people: `12 ms`, `3.4 s`; `running` while there is none. */
export function duration(ms: number | null): string {
  if (ms === null) return 'running';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 60_000 ? 1 : 0)} s`;
}

/** A run's state as a badge. */
export const runBadge = (status: CloudRun['status']): Html =>
  badge(status === 'succeeded' ? 'ok' : status === 'running' ? 'run' : 'bad', status);

const lineText = (line: CloudRunLine): Html => {
  const text = `${line.time.slice(11, 23)}  ${line.level.padEnd(5)}  ${line.message}\n`;
  return line.level === 'warn' || line.level === 'error' ? html`<span class="log-${line.level}">${text}</span>` : html`${text}`;
};

/**
 * A run's output: its error when it failed, then its log lines in a disclosure (closed, so that a
 * page of runs stays short). `label` names the run for screen readers, whose summary is otherwise
 * only a count.
 */
export function runOutput(run: CloudRun, label: string): Html {
  const error = run.error ? html`<p class="run-error"><span class="sr">Error: </span>${run.error}</p>` : '';
  if (run.lines.length === 0) return html`${error}<span class="muted">No output</span>`;
  const omitted = run.omittedLines ? html`<span class="muted">… ${plural(run.omittedLines, 'more line')} not kept (at most ${RUN_LIMITS.linesPerRun} a run)</span>\n` : '';
  return html`${error}<details><summary>${plural(run.lines.length + run.omittedLines, 'line')}<span class="sr"> of output of ${label}</span></summary><pre class="output run-log" tabindex="0">${run.lines.map(lineText)}${omitted}</pre></details>`;
}

/** What ran, as the first cell of its row: a trigger with its class, a job with its status object. */
function runName(appId: string, run: CloudRun): Html {
  if (run.kind === 'trigger') return html`<code>${run.name}</code>${run.className ? html` <span class="muted">on</span> <code>${run.className}</code>` : ''}`;
  if (run.kind === 'job' && run.jobId) return html`<a href="${objectHref(appId, '_JobStatus', run.jobId)}"><code>${run.name}</code></a>`;
  return html`<code>${run.name}</code>`;
}

/** The label of a run for screen readers: `greet, function, 09:30:05`. */
export const runLabel = (run: CloudRun): string => `${run.name}${run.className ? ` on ${run.className}` : ''}, ${run.kind}, ${run.startedAt.slice(11, 19)}`;

/**
 * The table of an app's recent runs, newest first (`CloudRuntime.recentRuns`). On a phone the style
 * sheet stacks each row; the explicit roles keep it a table for screen readers, which some browsers
 * stop announcing as one once its CSS display changes.
 */
export function runsTable(appId: string, runs: CloudRun[]): Html {
  if (runs.length === 0) return html`<p class="empty">Nothing has run since Backyard started.</p>`;
  return html`<div class="table-wrap"><table class="runs" role="table">
  <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Name</th><th scope="col" role="columnheader">Kind</th><th scope="col" role="columnheader">Status</th><th scope="col" role="columnheader">Started</th><th scope="col" role="columnheader" class="num">Duration</th><th scope="col" role="columnheader">Output</th></tr></thead>
  <tbody role="rowgroup">${runs.map(
    (run) => html`<tr role="row"><th scope="row" role="rowheader">${runName(appId, run)}</th><td role="cell">${run.kind}</td><td role="cell">${runBadge(run.status)}</td><td role="cell">${whenExactly(run.startedAt)}</td>
    <td role="cell" class="num nowrap">${duration(run.durationMs)}</td><td role="cell" class="run-output">${runOutput(run, runLabel(run))}</td></tr>`,
  )}</tbody></table></div>`;
}

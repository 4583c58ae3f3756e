import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ManagementError } from '../../errors.js';
import { EXECUTIONS_LIST_LIMIT, type CommandExecution, type DevelopmentEnvironment, type ExecutionSummary } from '../../platform/devenvs/service.js';
import { invokeOperation } from '../../../tools/invoke.js';
import { operationsByName } from '../../../tools/index.js';
import { flashOf, formOf, redirect, redirectWith, sendNotFound, sendPage, sessionOf, type Dashboard } from './context.js';
import { openEventStream } from './events.js';
import { html, path, plural, when } from './html.js';
import { badge, csrfField } from './layout.js';
import { environmentHref } from './overview.js';
import { lifecycleButton } from './lifecycle.js';

type EnvParams = { Params: { environmentId: string } };
type ExecParams = { Params: { environmentId: string; executionId: string } };

/** How often a live stream looks for new output, in milliseconds. */
const POLL_MS = 250;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

const executionHref = (environmentId: string, executionId: string) => path`/dashboard/environments/${environmentId}/executions/${executionId}`;

/** One of the session's own environments, or undefined after answering 404. */
async function ownEnvironment(d: Dashboard, request: FastifyRequest, reply: FastifyReply, environmentId: string): Promise<DevelopmentEnvironment | undefined> {
  const session = sessionOf(request);
  const environment = (await d.services.devenvs.list(session.account.id)).find((e) => e.id === environmentId);
  if (!environment) sendNotFound(reply, session, 'development environment');
  return environment;
}

/** What `read` answers, or undefined when it refuses with notFound (an unknown id, or another account's). */
async function unlessNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ManagementError && error.kind === 'notFound') return undefined;
    throw error;
  }
}

/** The state of one execution, or undefined when the environment has no such execution. */
const inspect = (d: Dashboard, accountId: string, environmentId: string, executionId: string): Promise<CommandExecution | undefined> =>
  unlessNotFound(() => d.services.devenvs.inspect(accountId, environmentId, executionId));

/** One execution's command and times, or undefined when the environment has no such execution. */
const summaryOf = (d: Dashboard, accountId: string, environmentId: string, executionId: string): Promise<ExecutionSummary | undefined> =>
  unlessNotFound(() => d.services.devenvs.executionSummary(accountId, environmentId, executionId));

const stateBadge = (execution: { status: string; exitCode?: number | null }, id?: string) =>
  execution.status === 'running' ? badge('run', 'running', id) : badge(execution.exitCode === 0 ? 'ok' : 'bad', 'exited', id);

function duration(from: string, to: string | null): string {
  const ms = (to ? Date.parse(to) : Date.now()) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return '';
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

/** The form that runs a command in the environment (its page follows the execution live). */
const commandForm = (session: Parameters<typeof csrfField>[0], environmentId: string) =>
  html`<form method="post" action="${environmentHref(environmentId)}/commands" aria-labelledby="run-heading">
  ${csrfField(session)}
  <h2 id="run-heading">Run a command</h2>
  <div class="field"><label for="command">Command</label>
    <input id="command" name="command" class="mono" required spellcheck="false" autocomplete="off" aria-describedby="command-hint">
    <span class="hint" id="command-hint">Run with <code>sh -c</code> in <code>/workspace</code>, as executeCommand does; its output then shows live.</span></div>
  <button type="submit">Run</button>
</form>`;

/** The End button of a running execution; the page's script removes it (data-live-hint) once the command exits. */
const endButton = (session: Parameters<typeof csrfField>[0], environmentId: string, executionId: string) =>
  html`<form method="post" action="${executionHref(environmentId, executionId)}/end" class="inline" data-live-hint data-confirm="End this command? Its processes get SIGTERM, then SIGKILL 5 seconds later.">${csrfField(session)}<button type="submit" class="danger">End</button></form>`;

/**
 * Development environments: each one's command executions (command, status, exit code), and an
 * execution's output, followed live over server-sent events while it runs; a form that runs a
 * command, and an End button for a running one.
 */
export function environmentRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<EnvParams>('/environments/:environmentId', async (request, reply) => {
    const session = sessionOf(request);
    const environment = await ownEnvironment(d, request, reply, request.params.environmentId);
    if (!environment) return reply;
    const summaries = await d.services.devenvs.executions(session.account.id, environment.id);
    const executions = await Promise.all(summaries.map(async (e) => {
      if (e.status !== 'running') return e;
      const now = await inspect(d, session.account.id, environment.id, e.id);
      return now && now.status === 'exited' ? { ...e, status: 'exited' as const, exitCode: now.exitCode ?? null } : e;
    }));
    return sendPage(reply, 200, {
      title: environment.chatTitle,
      session,
      crumbs: [{ label: 'Overview', href: '/dashboard' }, { label: environment.chatTitle }],
      heading: html`<h1>${environment.chatTitle} <span class="muted small">Development environment</span></h1>`,
      body: html`${flashOf(d, request)}<dl class="facts"><dt>Environment id</dt><dd><code>${environment.id}</code></dd><dt>Created</dt><dd>${when(environment.createdAt)}</dd>
<dt>Commands</dt><dd>${plural(executions.length, 'command')}${executions.length >= EXECUTIONS_LIST_LIMIT ? ` (the latest ${EXECUTIONS_LIST_LIMIT} shown)` : ''}</dd></dl>
<div class="actions">
  ${lifecycleButton(session, `${environmentHref(environment.id)}/restart`, 'Restart', 'Restart this environment? Every process in it ends; /workspace is kept.')}
  ${lifecycleButton(session, `${environmentHref(environment.id)}/delete`, 'Delete', `Delete the environment "${environment.chatTitle}" for good, with every file in /workspace? This cannot be undone.`)}
</div>
${commandForm(session, environment.id)}
<section aria-labelledby="executions-heading">
<h2 id="executions-heading">Command executions</h2>
${executions.length
  ? html`<div class="table-wrap"><table>
  <thead><tr><th scope="col">Command</th><th scope="col">Status</th><th scope="col" class="num">Exit code</th><th scope="col">Started</th><th scope="col">Took</th></tr></thead>
  <tbody>${executions.map(
    (e) => html`<tr><td class="cell mono"><a href="${executionHref(environment.id, e.id)}" title="${e.command}">${e.command.length > 80 ? `${e.command.slice(0, 80)}…` : e.command}</a></td>
    <td>${stateBadge(e)}</td><td class="num">${e.exitCode ?? ''}</td><td>${when(e.createdAt)}</td><td>${e.status === 'exited' ? duration(e.createdAt, e.exitedAt) : ''}</td></tr>`,
  )}</tbody></table></div>`
  : html`<p class="empty">No command has run in this environment yet.</p>`}
</section>`,
    });
  });

  app.get<ExecParams>('/environments/:environmentId/executions/:executionId', async (request, reply) => {
    const session = sessionOf(request);
    const environment = await ownEnvironment(d, request, reply, request.params.environmentId);
    if (!environment) return reply;
    const execution = await inspect(d, session.account.id, environment.id, request.params.executionId);
    const summary = await summaryOf(d, session.account.id, environment.id, request.params.executionId);
    if (!execution || !summary) return sendNotFound(reply, session, 'command execution');
    const running = execution.status === 'running';
    const events = `${executionHref(environment.id, execution.id)}/events`;
    return sendPage(reply, 200, {
      title: `Command · ${environment.chatTitle}`,
      session,
      crumbs: [{ label: 'Overview', href: '/dashboard' }, { label: environment.chatTitle, href: environmentHref(environment.id) }, { label: 'Command' }],
      heading: html`<h1>Command execution</h1>`,
      body: html`${flashOf(d, request)}<pre class="mono" aria-label="Command">${summary.command}</pre>
<div${running ? html` data-events="${events}" data-state="running"` : html` data-state="exited"`} id="execution">
<dl class="facts">
  <dt>Status</dt><dd><span aria-live="polite">${stateBadge(execution, 'status')}</span></dd>
  <dt>Exit code</dt><dd id="exit-code">${execution.exitCode ?? (running ? '—' : '')}</dd>
  ${execution.startError ? html`<dt>Could not start</dt><dd id="start-error">${execution.startError}</dd>` : ''}
  <dt>Started</dt><dd>${when(summary.createdAt)}</dd>
  <dt>Execution id</dt><dd><code>${execution.id}</code></dd>
</dl>
<h2 id="stdout-heading">Output <span class="muted small">(stdout)</span></h2>
<pre class="output" id="stdout" tabindex="0" aria-labelledby="stdout-heading">${execution.stdout}</pre>
<h2 id="stderr-heading">Errors <span class="muted small">(stderr)</span></h2>
<pre class="output stderr" id="stderr" tabindex="0" aria-labelledby="stderr-heading">${execution.stderr}</pre>
${running ? html`<p class="hint" data-live-hint>The output updates live while the command runs.</p>` : ''}
${running ? html`<div class="actions">${endButton(session, environment.id, execution.id)}</div>` : ''}
</div>`,
    });
  });

  // Runs the form's command (executeCommand's service, its rules and texts) and shows its page at once,
  // which follows it live: the form does not wait for the command (an aborted wait).
  app.post<EnvParams>('/environments/:environmentId/commands', async (request, reply) => {
    const session = sessionOf(request);
    const environment = await ownEnvironment(d, request, reply, request.params.environmentId);
    if (!environment) return reply;
    const command = formOf(request).command ?? '';
    try {
      const started = await d.services.devenvs.execute(session.account.id, environment.id, command, AbortSignal.abort());
      return redirect(reply, executionHref(environment.id, started.id));
    } catch (error) {
      if (!(error instanceof ManagementError)) throw error;
      if (error.kind === 'notFound') return sendNotFound(reply, session, 'development environment');
      return redirectWith(d, reply, session, environmentHref(environment.id), { kind: 'bad', title: `The command did not run: ${error.message}`, lines: [] });
    }
  });

  // Ends a running execution through interactWithCommandExecution with exit: true.
  app.post<ExecParams>('/environments/:environmentId/executions/:executionId/end', async (request, reply) => {
    const session = sessionOf(request);
    const { environmentId, executionId } = request.params;
    const back = executionHref(environmentId, executionId);
    try {
      const { exitCode } = await invokeOperation(
        operationsByName.interactWithCommandExecution,
        { developmentEnvironmentId: environmentId, commandExecutionId: executionId, exit: true },
        { account: session.account, services: d.services },
      );
      return redirectWith(d, reply, session, back, { kind: 'ok', title: `The command was ended (exit code ${typeof exitCode === 'number' ? exitCode : 'unknown'}).`, lines: [] });
    } catch (error) {
      if (!(error instanceof ManagementError)) throw error;
      if (error.kind === 'notFound') return sendNotFound(reply, session, 'command execution');
      return redirectWith(d, reply, session, back, { kind: 'bad', title: error.message, lines: [] });
    }
  });

  // Server-sent events: `snapshot` (whole output), `append` (new output), then `exit` and the end.
  app.get<ExecParams>('/environments/:environmentId/executions/:executionId/events', async (request, reply) => {
    const session = sessionOf(request);
    const { environmentId, executionId } = request.params;
    const owned = (await d.services.devenvs.list(session.account.id)).some((e) => e.id === environmentId);
    let last = owned ? await inspect(d, session.account.id, environmentId, executionId) : undefined;
    if (!last) return reply.code(404).type('text/plain; charset=utf-8').send('No such command execution.');

    const { res, send } = openEventStream(d, reply);
    let timer: NodeJS.Timeout | undefined;
    let keepalive: NodeJS.Timeout | undefined;
    const stop = () => {
      clearInterval(timer);
      clearInterval(keepalive);
      d.streams.delete(res);
      if (!res.writableEnded) res.end();
    };
    const finishIfExited = (execution: CommandExecution): boolean => {
      if (execution.status !== 'exited') return false;
      send('exit', { status: 'exited', exitCode: execution.exitCode ?? null });
      stop();
      return true;
    };
    send('snapshot', { stdout: last.stdout, stderr: last.stderr });
    if (finishIfExited(last)) return;
    let polling = false;
    const poll = async () => {
      try {
        const now = await inspect(d, session.account.id, environmentId, executionId);
        if (!now) return stop();
        const previous = last!;
        if (now.stdout !== previous.stdout || now.stderr !== previous.stderr) {
          if (now.stdout.startsWith(previous.stdout) && now.stderr.startsWith(previous.stderr)) {
            send('append', { stdout: now.stdout.slice(previous.stdout.length), stderr: now.stderr.slice(previous.stderr.length) });
          } else send('snapshot', { stdout: now.stdout, stderr: now.stderr });
        }
        last = now;
        finishIfExited(now);
      } catch (error) {
        d.platform.log.warn({ err: error, executionId }, 'dashboard: could not follow a command execution');
        stop();
      }
    };
    // One poll at a time: a slow read is not overtaken by the next.
    timer = setInterval(() => {
      if (polling) return;
      polling = true;
      void poll().finally(() => (polling = false));
    }, POLL_MS);
    keepalive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
    request.raw.on('close', stop);
    return reply;
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BackendApp } from '../../platform/backendapps/service.js';
import { BadCallError, type BackendApiCall } from '../../data/service.js';
import { appCrumbs, appHeading, appHref, dataCall, type DataAnswer } from './appframe.js';
import { formOf, ownApp, sendPage, sessionOf, type Dashboard } from './context.js';
import { html, type Html } from './html.js';
import { csrfField, notice } from './layout.js';

type AppParams = { Params: { appId: string } };

const METHODS: Array<BackendApiCall['method']> = ['GET', 'POST', 'PUT', 'DELETE'];

interface ConsoleRequest {
  method: BackendApiCall['method'];
  path: string;
  body: string;
}

function consolePage(
  d: Dashboard,
  request: FastifyRequest,
  reply: FastifyReply,
  app: BackendApp,
  sent: ConsoleRequest,
  outcome?: { answer?: DataAnswer; error?: string; ms?: number },
): FastifyReply {
  const session = sessionOf(request);
  let answer: Html | '' = '';
  if (outcome?.error) answer = notice('bad', outcome.error);
  else if (outcome?.answer) {
    const ok = outcome.answer.code < 400;
    answer = html`<section aria-labelledby="answer-heading" id="answer">
  <h2 id="answer-heading">Answer</h2>
  <p><span class="answer-status badge ${ok ? 'ok' : 'bad'}" id="answer-status">${outcome.answer.code}</span> <span class="muted small">in ${outcome.ms ?? 0} ms</span></p>
  <pre id="answer-body" tabindex="0" aria-label="Answer body">${JSON.stringify(outcome.answer.body, null, 2)}</pre>
</section>`;
  }
  return sendPage(reply, outcome?.error ? 400 : 200, {
    title: `API console · ${app.appName}`,
    session,
    crumbs: appCrumbs(app, { label: 'API console' }),
    heading: appHeading(app, 'console'),
    body: html`<p>Send a request to this app's data API (<code>${app.apiURL}</code>) and read its answer. Requests run with the <strong>master key</strong>: permissions and ACLs do not apply.</p>
<form method="post" action="${appHref(app.appId, 'console')}" class="panel">
  ${csrfField(session)}
  <div class="row">
    <div class="field"><label for="console-method">Method</label>
      <select id="console-method" name="method">${METHODS.map((m) => html`<option${m === sent.method ? html` selected` : ''}>${m}</option>`)}</select></div>
    <div class="field"><label for="console-path">Path</label>
      <input id="console-path" name="path" class="mono" size="48" value="${sent.path}" required spellcheck="false" aria-describedby="console-path-hint"></div>
  </div>
  <p class="hint" id="console-path-hint">Below the data API root, e.g. <code>/classes/ToDo</code>, <code>/classes/ToDo?limit=5&amp;order=-createdAt</code>, <code>/functions/hello</code>, <code>/schemas</code>.</p>
  <div class="field"><label for="console-body">Body (JSON)</label>
    <textarea id="console-body" name="body" rows="6" spellcheck="false" aria-describedby="console-body-hint">${sent.body}</textarea>
    <span class="hint" id="console-body-hint">For POST and PUT. With GET, its keys are query parameters (<code>{"where": {"done": false}}</code>).</span></div>
  <button type="submit">Send request</button>
</form>
${answer}`,
  });
}

/** The API console: one request to the app's data API (with the master key) and its answer. */
export function consoleRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/apps/:appId/console', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return consolePage(d, request, reply, backendApp, { method: 'GET', path: '/schemas', body: '' });
  });

  app.post<AppParams>('/apps/:appId/console', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const form = formOf(request);
    const method = (METHODS as string[]).includes(form.method ?? '') ? (form.method as BackendApiCall['method']) : 'GET';
    const sent: ConsoleRequest = { method, path: (form.path ?? '').trim(), body: form.body ?? '' };
    let body: Record<string, unknown> = {};
    if (sent.body.trim() !== '') {
      try {
        const parsed = JSON.parse(sent.body) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        body = parsed as Record<string, unknown>;
      } catch {
        return consolePage(d, request, reply, backendApp, sent, { error: 'The body must be a JSON object, e.g. {"title": "Buy milk"}.' });
      }
    }
    if (sent.path === '') return consolePage(d, request, reply, backendApp, sent, { error: 'Give a path, e.g. /classes/ToDo.' });
    const started = Date.now();
    try {
      const answer = await dataCall(d, backendApp.appId, method, sent.path, body);
      return consolePage(d, request, reply, backendApp, sent, { answer, ms: Date.now() - started });
    } catch (error) {
      if (error instanceof BadCallError || error instanceof URIError) return consolePage(d, request, reply, backendApp, sent, { error: error.message });
      throw error;
    }
  });
}

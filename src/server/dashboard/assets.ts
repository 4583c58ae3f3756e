import { createHash } from 'node:crypto';

/**
 * The dashboard's own static assets: one style sheet and two small scripts, kept here as text so
 * that `npm run build` (tsc) ships them and nothing is built on the user's machine. Pages work
 * without the script; it adds confirmations, copy buttons and live command output.
 */

const CSS = String.raw`
:root {
  --text: #1a1a1a; --muted: #4d4d4d; --bg: #ffffff; --panel: #f5f6f8; --line: #d4d7dd;
  --accent: #1d4ed8; --accent-text: #ffffff; --accent-soft: #e8eefc;
  --danger: #b42318; --ok: #12703a; --ok-soft: #e3f4e9; --warn-soft: #fff4d6; --warn-text: #6b4100;
  --bad-soft: #fdeceb; --code: #f1f2f4; --radius: 6px;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Ubuntu, sans-serif;
  color: var(--text); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
.top { display: flex; align-items: center; gap: 1rem; flex-wrap: wrap; padding: .6rem 1.25rem;
  background: #15233b; color: #fff; }
.top a { color: #fff; }
.brand { font-weight: 700; font-size: 1.15rem; text-decoration: none; display: flex; align-items: center; gap: .45rem; }
.brand-mark { display: inline-block; width: 1.1rem; height: 1.1rem; border-radius: 3px; background: linear-gradient(135deg, #4ade80, #22c55e 45%, #1d4ed8 46%); }
.top .who { margin-left: auto; display: flex; align-items: center; gap: .75rem; flex-wrap: wrap; }
.top .who form { margin: 0; }
.top button { background: transparent; color: #fff; border: 1px solid #9fb0cc; }
.top button:hover { background: #23365a; }
main { max-width: 76rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: .4rem 0 .75rem; line-height: 1.25; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.75rem 0 .6rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
p { margin: .5rem 0; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
code { background: var(--code); padding: .1em .3em; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: var(--code); padding: .75rem; border-radius: var(--radius); overflow: auto; max-height: 32rem; margin: .5rem 0;
  white-space: pre-wrap; overflow-wrap: anywhere; }
pre.output { background: #0f172a; color: #e2e8f0; min-height: 3rem; }
pre.output.stderr { color: #fecaca; }
.muted { color: var(--muted); }
.small { font-size: .875rem; }
.crumbs { list-style: none; display: flex; flex-wrap: wrap; gap: .35rem; padding: 0; margin: .25rem 0 0; font-size: .9rem; }
.crumbs li + li::before { content: "/"; color: var(--muted); margin-right: .35rem; }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem; border-bottom: 1px solid var(--line); margin: .5rem 0 1rem; padding: 0; list-style: none; }
.tabs a { display: block; padding: .45rem .8rem; text-decoration: none; border: 1px solid transparent; border-bottom: none;
  border-radius: var(--radius) var(--radius) 0 0; color: var(--text); }
.tabs a:hover { background: var(--panel); }
.tabs a[aria-current="page"] { border-color: var(--line); background: var(--bg); font-weight: 600; margin-bottom: -1px; color: var(--accent); }
.panel > h2:first-child, .panel > h3:first-child, .panel > form > .field:first-child { margin-top: 0; }
.actions h2 { margin: 0; font-size: 1.1rem; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: .9rem 1rem; margin: .75rem 0; }
.notice { border-radius: var(--radius); padding: .7rem 1rem; margin: .75rem 0; border: 1px solid; }
.notice.ok { background: var(--ok-soft); border-color: #9ed4b2; }
.notice.warn { background: var(--warn-soft); border-color: #e8c56d; color: var(--warn-text); }
.notice.bad { background: var(--bad-soft); border-color: #f0a8a2; }
.notice ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600; border: 1px solid; white-space: nowrap; }
.badge.ok { background: var(--ok-soft); color: var(--ok); border-color: #9ed4b2; }
.badge.run { background: var(--accent-soft); color: var(--accent); border-color: #a9bff2; }
.badge.bad { background: var(--bad-soft); color: var(--danger); border-color: #f0a8a2; }
.badge.off { background: var(--panel); color: var(--muted); border-color: var(--line); }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); }
.cards { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr)); padding: 0; list-style: none; margin: .5rem 0; }
.card { border: 1px solid var(--line); border-radius: var(--radius); padding: .8rem 1rem; background: var(--bg); }
.card h3 { margin: 0 0 .3rem; overflow-wrap: anywhere; }
.split { display: grid; gap: 1.25rem; grid-template-columns: 15rem minmax(0, 1fr); align-items: start; }
@media (max-width: 50rem) {
  .split { grid-template-columns: minmax(0, 1fr); gap: .5rem; }
  .side.chips { display: flex; flex-wrap: wrap; gap: .35rem; border: none; overflow: visible; }
  .side.chips li, .side.chips li + li { border: 1px solid var(--line); border-radius: 999px; }
  .side.chips a { padding: .2rem .7rem; border-radius: 999px; }
}
.side { list-style: none; padding: 0; margin: 0; border: 1px solid var(--line); border-radius: var(--radius); overflow: hidden; }
.side li + li { border-top: 1px solid var(--line); }
.side a { display: flex; justify-content: space-between; gap: .5rem; padding: .45rem .7rem; text-decoration: none; color: var(--text); overflow-wrap: anywhere; }
.side a:hover { background: var(--panel); }
.side a[aria-current="page"] { background: var(--accent-soft); font-weight: 600; color: var(--accent); }
.side li > .row { padding: .3rem .7rem; margin: 0; justify-content: space-between; align-items: center; }
.side .n { color: var(--muted); font-variant-numeric: tabular-nums; font-weight: 400; }
dl.facts { display: grid; grid-template-columns: minmax(8rem, max-content) minmax(0, 1fr); gap: .35rem 1rem; margin: .5rem 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
dl.facts dd > code { min-width: 0; flex: 0 1 auto; }
@media (max-width: 36rem) { dl.facts { grid-template-columns: minmax(0, 1fr); } dl.facts dd { margin-bottom: .4rem; } }
/* relative: screen-reader-only text in a cell is clipped with the table, not widening the page. */
.table-wrap { position: relative; overflow-x: auto; border: 1px solid var(--line); border-radius: var(--radius); margin: .5rem 0; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: var(--panel); position: sticky; top: 0; white-space: nowrap; }
tbody tr:last-child > * { border-bottom: none; }
tbody tr:hover { background: #fafbfc; }
td.cell { max-width: 18rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th .type { display: block; font-weight: 400; font-size: .75rem; color: var(--muted); }
th a { color: var(--text); }
th a .arrow { color: var(--accent); }
.null { color: var(--muted); font-style: italic; }
form.inline { display: inline; margin: 0; }
.row { display: flex; flex-wrap: wrap; gap: .5rem .75rem; align-items: flex-end; margin: .5rem 0; }
.row > * { margin: 0; }
.field { display: flex; flex-direction: column; gap: .2rem; margin: 0 0 .8rem; }
.field label, .row label { font-weight: 600; font-size: .9rem; }
.field .hint, .hint { font-size: .85rem; color: var(--muted); font-weight: 400; }
input[type=text], input[type=password], input[type=search], input:not([type]), select, textarea {
  font: inherit; padding: .4rem .55rem; border: 1px solid #8a8f98; border-radius: 4px; background: #fff; color: var(--text); max-width: 100%; }
textarea { width: 100%; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
textarea.code { min-height: 24rem; tab-size: 2; }
input.wide { width: 100%; }
button, .button { font: inherit; font-weight: 600; padding: .42rem .9rem; border-radius: 4px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-text); cursor: pointer; text-decoration: none; display: inline-block; line-height: 1.4; }
button:hover, .button:hover { background: #1e40af; }
button.secondary, .button.secondary { background: var(--bg); color: var(--accent); }
button.secondary:hover, .button.secondary:hover { background: var(--accent-soft); }
button.danger { background: var(--bg); color: var(--danger); border-color: var(--danger); }
button.danger:hover { background: var(--bad-soft); }
button.small { padding: .15rem .55rem; font-size: .85rem; }
fieldset { border: 1px solid var(--line); border-radius: var(--radius); padding: .6rem 1rem .8rem; margin: .75rem 0; }
legend { font-weight: 600; padding: 0 .3rem; }
details { margin: .75rem 0; }
details > summary { cursor: pointer; font-weight: 600; color: var(--accent); }
details[open] > summary { margin-bottom: .5rem; }
.pager { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; margin: .5rem 0; }
.pager .links { display: flex; gap: .4rem; flex-wrap: wrap; }
.pager a, .pager span.off { padding: .25rem .6rem; border: 1px solid var(--line); border-radius: 4px; text-decoration: none; }
.pager span.off { color: var(--muted); }
.tree { list-style: none; padding: 0; margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88rem; }
.tree .folder { color: var(--muted); padding: .35rem .7rem; font-weight: 600; }
.tree a { padding-left: 1.4rem; }
.clp td, .clp th { text-align: center; }
.clp td:first-child, .clp th:first-child { text-align: left; }
.yes { color: var(--ok); font-weight: 700; }
.no { color: var(--muted); }
.signin { max-width: 28rem; margin: 3rem auto; }
.signin .panel { padding: 1.25rem 1.5rem; background: var(--bg); }
.graphiql { height: 75vh; min-height: 28rem; border: 1px solid var(--line); border-radius: var(--radius); overflow: hidden; }
.signin input { width: 100%; }
.empty { color: var(--muted); padding: 1rem; text-align: center; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .75rem 0; }
.secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.answer-status { font-weight: 700; }
.nowrap { white-space: nowrap; }
.check { display: flex; gap: .5rem; align-items: center; }
.check input { width: 1.1rem; height: 1.1rem; margin: 0; }
.field input[aria-invalid="true"], .field textarea[aria-invalid="true"] { border-color: var(--danger); box-shadow: 0 0 0 1px var(--danger); }
.field .field-error { color: var(--danger); font-size: .9rem; overflow-wrap: anywhere; }
table.runs tbody th { font-weight: 400; }
td.run-output { min-width: 14rem; }
td.run-output details { margin: 0; }
pre.run-log { max-height: 20rem; margin: .35rem 0 0; font-size: .82rem; }
pre.run-log .log-warn { color: #fde68a; }
pre.run-log .log-error { color: #fecaca; }
.run-error { color: var(--danger); margin: 0 0 .3rem; overflow-wrap: anywhere; }
@media (max-width: 36rem) {
  table.runs, table.runs tbody, table.runs th, table.runs td { display: block; }
  table.runs thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.runs tbody tr { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem .75rem; padding: .55rem .7rem; border-bottom: 1px solid var(--line); }
  table.runs tbody tr > * { border: none; padding: 0; }
  table.runs tbody th { font-weight: 600; }
  table.runs td.run-output { flex-basis: 100%; min-width: 0; }
}
@media (max-width: 36rem) {
  main { padding: .75rem .8rem 2rem; }
  h1 { font-size: 1.35rem; }
  .top { padding: .5rem .8rem; }
  .tabs a { padding: .35rem .55rem; font-size: .92rem; }
  td.cell { max-width: 11rem; }
}
`;

const JS = String.raw`
'use strict';
(() => {
  // Asks before destructive changes (forms marked data-confirm).
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });

  // Copy buttons: data-copy names the element whose text is copied.
  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      const label = button.textContent;
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = label; }, 1500);
    } catch {
      window.getSelection().selectAllChildren(source);
    }
  });

  // Live output of a command execution over server-sent events.
  for (const live of document.querySelectorAll('[data-events]')) {
    const stdout = document.getElementById('stdout');
    const stderr = document.getElementById('stderr');
    const status = document.getElementById('status');
    const exitCode = document.getElementById('exit-code');
    const follow = (pre, write) => {
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
      write();
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    };
    const source = new EventSource(live.dataset.events);
    source.addEventListener('snapshot', (event) => {
      const data = JSON.parse(event.data);
      follow(stdout, () => { stdout.textContent = data.stdout; });
      follow(stderr, () => { stderr.textContent = data.stderr; });
    });
    source.addEventListener('append', (event) => {
      const data = JSON.parse(event.data);
      if (data.stdout) follow(stdout, () => { stdout.textContent += data.stdout; });
      if (data.stderr) follow(stderr, () => { stderr.textContent += data.stderr; });
    });
    source.addEventListener('exit', (event) => {
      const data = JSON.parse(event.data);
      status.textContent = 'exited';
      status.className = 'badge ' + (data.exitCode === 0 ? 'ok' : 'bad');
      exitCode.textContent = String(data.exitCode);
      live.dataset.state = 'exited';
      for (const hint of document.querySelectorAll('[data-live-hint]')) hint.remove();
      source.close();
    });
    source.onerror = () => { if (live.dataset.state === 'exited') source.close(); };
  }

  // Live build and container logs of a Web App deployment.
  for (const live of document.querySelectorAll('[data-deploy-events]')) {
    const build = document.getElementById('build-logs');
    const containers = document.getElementById('container-logs');
    const status = document.getElementById('deploy-status');
    const commit = document.getElementById('deploy-commit');
    const failure = document.getElementById('deploy-error');
    const follow = (pre, write) => {
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
      write();
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    };
    const kinds = { active: 'ok', failed: 'bad', superseded: 'off' };
    const source = new EventSource(live.dataset.deployEvents);
    source.addEventListener('status', (event) => {
      const data = JSON.parse(event.data);
      status.textContent = data.status;
      status.className = 'badge ' + (kinds[data.status] || 'run');
      if (data.commitSHA) commit.textContent = data.commitSHA;
      if (data.error) {
        const box = document.createElement('div');
        box.className = 'notice bad';
        const strong = document.createElement('strong');
        strong.textContent = 'Failed: ';
        box.append(strong, data.error);
        failure.replaceChildren(box);
      }
    });
    source.addEventListener('build', (event) => {
      const data = JSON.parse(event.data);
      follow(build, () => { build.textContent = data.reset ? data.text : build.textContent + data.text; });
    });
    source.addEventListener('containers', (event) => {
      const data = JSON.parse(event.data);
      follow(containers, () => { containers.textContent = data.text; });
    });
    source.addEventListener('end', () => {
      live.dataset.state = 'finished';
      for (const hint of document.querySelectorAll('[data-live-hint]')) hint.remove();
      source.close();
    });
    source.onerror = () => { if (live.dataset.state === 'finished') source.close(); };
  }
})();
`;

/**
 * The GraphQL page's script (graphql.ts): GraphiQL (its UMD build, with React's) on the element
 * `#graphiql`, whose data attributes give the endpoint and the session's CSRF token. Documents go to
 * the dashboard's own endpoint, which runs them with the master key on the server: the key never
 * reaches the browser.
 */
const GRAPHIQL_JS = String.raw`
(function () {
  var el = document.getElementById('graphiql');
  if (!el || !window.GraphiQL || !window.React || !window.ReactDOM) return;
  var fetcher = function (params) {
    return fetch(el.dataset.endpoint, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': el.dataset.csrf },
      body: JSON.stringify(params)
    }).then(function (response) { return response.json(); });
  };
  ReactDOM.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: el.dataset.query }), el);
})();
`;

const version = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** The assets by file name: content type, body and a content hash for cache-busting URLs. */
export const ASSETS: Record<string, { type: string; body: string; version: string }> = {
  'dashboard.css': { type: 'text/css; charset=utf-8', body: CSS, version: version(CSS) },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: JS, version: version(JS) },
  'graphiql-start.js': { type: 'text/javascript; charset=utf-8', body: GRAPHIQL_JS, version: version(GRAPHIQL_JS) },
};

/** The URL of an asset, with its content hash so that browsers may cache it for long. */
export const assetUrl = (name: keyof typeof ASSETS & string): string => `/dashboard/assets/${name}?v=${ASSETS[name]!.version}`;

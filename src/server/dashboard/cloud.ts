import type { FastifyInstance } from 'fastify';
import { ManagementError } from '../../errors.js';
import type { CloudCodeChange } from '../../platform/backendapps/cloudCode/plan.js';
import { scanTree } from '../../platform/backendapps/cloudCode/tree.js';
import { appCrumbs, appHeading, appHref } from './appframe.js';
import { flashOf, formOf, ownApp, queryOf, redirectWith, sendPage, sessionOf, type Dashboard } from './context.js';
import { html, plural, query, type Html } from './html.js';
import { csrfField, notice } from './layout.js';
import { versionsTable } from './cloudVersions.js';

type AppParams = { Params: { appId: string } };

const BINARY = /^\(binary, \d+ bytes?\)$/;

/** The files of an app's cloud code tree as a list of links, grouped under their folders. */
function treeList(appId: string, files: Map<string, number>, current: string | undefined): Html {
  const sorted = [...files.keys()].sort();
  const byFolder = new Map<string, string[]>([['cloud', []], ['public', []]]);
  for (const file of sorted) {
    const folder = file.slice(0, file.lastIndexOf('/'));
    if (!byFolder.has(folder)) byFolder.set(folder, []);
    byFolder.get(folder)!.push(file);
  }
  const folders = [...byFolder.keys()].sort();
  return html`<nav aria-label="Cloud code files"><ul class="side tree">${folders.map(
    (folder) => html`<li class="folder">${folder}/</li>${byFolder.get(folder)!.map(
      (file) => html`<li><a href="${appHref(appId, 'cloud')}${query({ path: file })}"${file === current ? html` aria-current="page"` : ''}><span>${file.slice(folder.length + 1)}</span><span class="n">${plural(files.get(file)!, 'byte')}</span></a></li>`,
    )}`,
  )}</ul></nav>`;
}

/**
 * Cloud code: the tree of `cloud/` and `public/`, a file viewer, and an editor that deploys through
 * `CloudCodeService.deploy` (the service behind deployCloudCode), showing what changed and its
 * warnings. New files and deletions go the same way. Below, the kept versions with rollback
 * (cloudVersions.ts).
 */
export function cloudRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/apps/:appId/cloud', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const appId = backendApp.appId;
    const q = queryOf(request);
    const versions = await d.services.cloudCode.versions(session.account.id, appId);
    const files = scanTree(d.services.cloudCode.tree(appId)).files;
    const selected = q.path && files.has(q.path) ? q.path : files.has('cloud/main.js') && !q.new ? 'cloud/main.js' : undefined;
    const editing = q.edit === '1' && selected !== undefined;
    const creating = q.new === '1' || selected === undefined;

    let content: string | undefined;
    let binary = false;
    if (selected) {
      content = await d.services.cloudCode.read(session.account.id, appId, selected);
      binary = BINARY.test(content) && Buffer.byteLength(content) !== files.get(selected);
    }
    const base = appHref(appId, 'cloud');
    const fileView = (): Html => {
      if (creating) {
        return html`<h2>New file</h2>
<form method="post" action="${base}" class="panel">
  ${csrfField(session)}<input type="hidden" name="action" value="write">
  <div class="field"><label for="new-path">Path</label><input id="new-path" name="path" class="mono wide" value="${q.path && !files.has(q.path) ? q.path : 'cloud/'}" required spellcheck="false" aria-describedby="new-path-hint">
    <span class="hint" id="new-path-hint">Under <code>cloud/</code> (server code; <code>cloud/main.js</code> is loaded) or <code>public/</code> (hosted files).</span></div>
  <div class="field"><label for="new-content">Content</label><textarea id="new-content" name="content" class="code" spellcheck="false"></textarea></div>
  <button type="submit">Deploy</button> <a href="${base}">Cancel</a>
</form>`;
      }
      if (editing && !binary) {
        return html`<h2 class="mono">${selected}</h2>
<form method="post" action="${base}" class="panel">
  ${csrfField(session)}<input type="hidden" name="action" value="write"><input type="hidden" name="path" value="${selected}">
  <div class="field"><label for="editor">Content of ${selected}</label>
    <textarea id="editor" name="content" class="code" spellcheck="false" aria-describedby="editor-hint">${content}</textarea>
    <span class="hint" id="editor-hint">Deploying saves the file and reloads the app's cloud code; a syntax error keeps the previous code running.</span></div>
  <div class="actions"><button type="submit">Deploy</button><a href="${base}${query({ path: selected })}">Cancel</a></div>
</form>`;
      }
      return html`<div class="actions"><h2 class="mono">${selected}</h2>
  ${binary ? '' : html`<a class="button" href="${base}${query({ path: selected, edit: 1 })}">Edit</a>`}
  ${selected!.startsWith('public/') && backendApp.publicWebHostingURL
    ? html`<a class="button secondary" href="${new URL(selected!.slice('public/'.length), backendApp.publicWebHostingURL).toString()}" target="_blank" rel="noopener">Open hosted file</a>`
    : ''}
  <form method="post" action="${base}" class="inline" data-confirm="Delete ${selected}?">${csrfField(session)}<input type="hidden" name="action" value="delete"><input type="hidden" name="path" value="${selected}"><button type="submit" class="danger">Delete</button></form>
</div>
${binary ? html`<p class="muted">A binary file of ${plural(files.get(selected!)!, 'byte')}.</p>` : html`<pre id="viewer" tabindex="0" aria-label="Content of ${selected}">${content}</pre>`}`;
    };

    return sendPage(reply, 200, {
      title: `Cloud code · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Cloud code' }),
      heading: appHeading(backendApp, 'cloud'),
      body: html`<div class="split">
<div>${treeList(appId, files, selected)}<p><a class="button secondary" href="${base}?new=1">New file</a></p></div>
<div>${flashOf(d, request)}${fileView()}</div>
</div>
${versionsTable(appId, session, versions)}`,
    });
  });

  app.post<AppParams>('/apps/:appId/cloud', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const form = formOf(request);
    const treePath = (form.path ?? '').trim();
    const change: CloudCodeChange =
      form.action === 'delete'
        ? { path: treePath, operation: 'delete' }
        : { path: treePath, operation: 'write', writeMode: 'overwrite', data: (form.content ?? '').replace(/\r\n/g, '\n') };
    const base = appHref(backendApp.appId, 'cloud');
    try {
      const result = await d.services.cloudCode.deploy(session.account.id, backendApp.appId, [change]);
      const back = form.action === 'delete' ? base : `${base}${query({ path: treePath })}`;
      return redirectWith(d, reply, session, back, {
        kind: result.warnings.length ? 'warn' : 'ok',
        title: result.warnings.length ? `Deployed ${treePath}, with ${plural(result.warnings.length, 'warning')}:` : `Deployed ${treePath}.`,
        lines: result.warnings,
        detail: result.message,
      });
    } catch (error) {
      if (!(error instanceof ManagementError)) throw error;
      return sendPage(reply, 400, {
        title: `Cloud code · ${backendApp.appName}`,
        session,
        crumbs: appCrumbs(backendApp, { label: 'Cloud code' }),
        heading: appHeading(backendApp, 'cloud'),
        body: html`${notice('bad', 'Nothing was deployed:', [error.message])}
${form.action === 'delete'
  ? ''
  : html`<form method="post" action="${base}" class="panel">${csrfField(session)}<input type="hidden" name="action" value="write">
  <div class="field"><label for="new-path">Path</label><input id="new-path" name="path" class="mono wide" value="${treePath}" required spellcheck="false"></div>
  <div class="field"><label for="editor">Content</label><textarea id="editor" name="content" class="code" spellcheck="false">${form.content ?? ''}</textarea></div>
  <button type="submit">Deploy</button> <a href="${base}">Cancel</a></form>`}`,
      });
    }
  });
}

import type { FastifyInstance } from 'fastify';
import { appCrumbs, appHeading, appHref, classList, classesOf, dataCall, errorText } from './appframe.js';
import { flashOf, formOf, ownApp, queryOf, redirect, redirectWith, sendNotFound, sendPage, sessionOf, type Dashboard } from './context.js';
import { count, html, path, query } from './html.js';
import { csrfField } from './layout.js';

type ClassParams = { Params: { appId: string; className: string } };

/** The actions of class-level permissions, with what each allows. */
const CLP_ACTIONS: Array<[string, string]> = [
  ['find', 'query objects'],
  ['count', 'count objects'],
  ['get', 'fetch one object by id'],
  ['create', 'create objects'],
  ['update', 'change objects'],
  ['delete', 'delete objects'],
  ['addField', 'add columns by saving new keys'],
];

const BUILT_IN_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

/** A CLP principal in words. */
function principalLabel(principal: string): string {
  if (principal === '*') return 'Public';
  if (principal === 'requiresAuthentication') return 'Signed-in users';
  if (principal.startsWith('role:')) return `Role ${principal.slice(5)}`;
  if (principal.startsWith('pointerFields')) return 'Pointer fields';
  return `User ${principal}`;
}

const schemaHref = (appId: string, className: string) => path`/dashboard/apps/${appId}/schema/${className}`;

/**
 * The schema of each class: its columns (with deletion), class-level permissions (a grid of
 * checkboxes, or JSON), its indexes, and dropping an empty class. Changes go through the data
 * API's `/schemas` with the master key.
 */
export function schemaRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<{ Params: { appId: string } }>('/apps/:appId/schema', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const classes = await classesOf(d, backendApp.appId, false);
    const first = classes.find((c) => !c.className.startsWith('_')) ?? classes[0];
    const flash = queryOf(request).flash;
    if (first) return redirect(reply, schemaHref(backendApp.appId, first.className) + query({ flash }));
    return sendPage(reply, 200, {
      title: `Schema · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Schema' }),
      heading: appHeading(backendApp, 'schema'),
      body: html`${flashOf(d, request)}<p class="empty">This app has no classes yet. Add one in the <a href="${appHref(backendApp.appId, 'data')}">data browser</a>.</p>`,
    });
  });

  app.get<ClassParams>('/apps/:appId/schema/:className', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className } = request.params;
    const classes = await classesOf(d, backendApp.appId);
    const cls = classes.find((c) => c.className === className);
    if (!cls) return sendNotFound(reply, session, 'class');
    const clp = cls.classLevelPermissions as Record<string, Record<string, unknown>>;
    const principals = ['*', 'requiresAuthentication'];
    for (const [action] of CLP_ACTIONS) for (const p of Object.keys(clp[action] ?? {})) if (!principals.includes(p)) principals.push(p);
    const here = schemaHref(backendApp.appId, className);
    const fields = Object.entries(cls.fields);

    return sendPage(reply, 200, {
      title: `${className} schema · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Schema', href: appHref(backendApp.appId, 'schema') }, { label: className }),
      heading: appHeading(backendApp, 'schema'),
      body: html`<div class="split">
<div>${classList(backendApp.appId, classes, className, 'schema')}</div>
<div>
  <div class="actions"><strong class="mono">${className}</strong> <span class="muted">${count(cls.count ?? 0)} objects</span>
    <a class="button secondary" href="${appHref(backendApp.appId, 'data')}/${encodeURIComponent(className)}">Browse objects</a></div>
  ${flashOf(d, request)}
  <section aria-labelledby="columns-heading">
  <h2 id="columns-heading">Columns</h2>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Target class</th><th scope="col">Required</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
    <tbody>${fields.map(
      ([name, type]) => html`<tr><th scope="row" class="mono">${name}</th><td>${type.type}</td><td>${type.targetClass ?? ''}</td><td>${type.required ? 'yes' : ''}</td>
      <td>${BUILT_IN_FIELDS.has(name)
        ? html`<span class="muted small">built in</span>`
        : html`<form method="post" action="${here}/columns/${encodeURIComponent(name)}/delete" class="inline" data-confirm="Delete the column ${name} and its value in every ${className} object?">
            ${csrfField(session)}<button type="submit" class="danger small" aria-label="Delete the column ${name}">Delete</button></form>`}</td></tr>`,
    )}</tbody>
  </table></div>
  <p class="hint">Add columns from the <a href="${appHref(backendApp.appId, 'data')}/${encodeURIComponent(className)}">data browser</a>.</p>
  </section>

  <section aria-labelledby="clp-heading">
  <h2 id="clp-heading">Class-level permissions</h2>
  <p class="hint">Who may do what with ${className} objects through the data API (the master key may always do everything). Each object's ACL narrows this further.</p>
  <form method="post" action="${here}/permissions">
    ${csrfField(session)}
    <input type="hidden" name="mode" value="grid">
    <div class="table-wrap"><table class="clp">
      <caption class="sr">Class-level permissions of ${className}</caption>
      <thead><tr><th scope="col">Action</th>${principals.map((p) => html`<th scope="col">${principalLabel(p)}${p === '*' || p === 'requiresAuthentication' ? '' : html`<span class="type mono">${p}</span>`}</th>`)}</tr></thead>
      <tbody>${CLP_ACTIONS.map(
        ([action, what]) => html`<tr><th scope="row">${action} <span class="type">${what}</span></th>${principals.map((p) => {
          const id = `clp-${action}-${principals.indexOf(p)}`;
          return html`<td><input type="checkbox" id="${id}" name="clp:${action}:${p}"${clp[action]?.[p] === true ? html` checked` : ''} aria-label="${principalLabel(p)} may ${what}"></td>`;
        })}</tr>`,
      )}</tbody>
    </table></div>
    <button type="submit">Save permissions</button>
  </form>
  <details><summary>Edit as JSON</summary>
  <form method="post" action="${here}/permissions" class="panel">
    ${csrfField(session)}
    <input type="hidden" name="mode" value="json">
    <div class="field"><label for="clp-json">classLevelPermissions</label>
      <textarea id="clp-json" name="json" rows="14" spellcheck="false" aria-describedby="clp-json-hint">${JSON.stringify(cls.classLevelPermissions, null, 2)}</textarea>
      <span class="hint" id="clp-json-hint">As in the REST API's <code>/schemas</code>: each action maps <code>"*"</code>, <code>"requiresAuthentication"</code>, <code>"role:name"</code> or a user id to <code>true</code>; <code>protectedFields</code> maps them to field lists.</span></div>
    <button type="submit">Save permissions</button>
  </form></details>
  </section>

  <section aria-labelledby="indexes-heading">
  <h2 id="indexes-heading">Indexes</h2>
  <ul>${Object.entries(cls.indexes).map(([name, keys]) => html`<li><code>${name}</code>: <code>${JSON.stringify(keys)}</code></li>`)}</ul>
  </section>

  ${(cls.count ?? 0) === 0
    ? html`<section aria-labelledby="drop-heading"><h2 id="drop-heading">Delete the class</h2>
    <form method="post" action="${here}/delete" data-confirm="Delete the empty class ${className}?">${csrfField(session)}<button type="submit" class="danger">Delete ${className}</button></form></section>`
    : ''}
</div></div>`,
    });
  });

  app.post<ClassParams>('/apps/:appId/schema/:className/permissions', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className } = request.params;
    const here = schemaHref(backendApp.appId, className);
    const form = formOf(request);
    let clp: Record<string, unknown>;
    if (form.mode === 'json') {
      try {
        clp = JSON.parse(form.json ?? '') as Record<string, unknown>;
      } catch {
        return redirectWith(d, reply, session, here, { kind: 'bad', title: 'The permissions were not saved: the JSON is not valid.', lines: [] });
      }
    } else {
      const current = (await classesOf(d, backendApp.appId, false)).find((c) => c.className === className);
      if (!current) return sendNotFound(reply, session, 'class');
      clp = {};
      for (const [action] of CLP_ACTIONS) clp[action] = {};
      for (const key of Object.keys(form)) {
        const match = /^clp:([A-Za-z]+):(.+)$/.exec(key);
        if (match && match[1]! in clp) (clp[match[1]!] as Record<string, boolean>)[match[2]!] = true;
      }
      const protectedFields = (current.classLevelPermissions as Record<string, unknown>).protectedFields;
      if (protectedFields !== undefined) clp.protectedFields = protectedFields;
    }
    const answer = await dataCall(d, backendApp.appId, 'PUT', path`/schemas/${className}`, { classLevelPermissions: clp });
    if (answer.code !== 200) return redirectWith(d, reply, session, here, { kind: 'bad', title: `The permissions were not saved: ${errorText(answer)}`, lines: [] });
    return redirectWith(d, reply, session, here, { kind: 'ok', title: `Saved the permissions of ${className}.`, lines: [] });
  });

  app.post<{ Params: { appId: string; className: string; field: string } }>('/apps/:appId/schema/:className/columns/:field/delete', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className, field } = request.params;
    const here = schemaHref(backendApp.appId, className);
    const answer = await dataCall(d, backendApp.appId, 'PUT', path`/schemas/${className}`, { fields: { [field]: { __op: 'Delete' } } });
    if (answer.code !== 200) return redirectWith(d, reply, session, here, { kind: 'bad', title: `The column was not deleted: ${errorText(answer)}`, lines: [] });
    return redirectWith(d, reply, session, here, { kind: 'ok', title: `Deleted the column ${field}.`, lines: [] });
  });

  app.post<ClassParams>('/apps/:appId/schema/:className/delete', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className } = request.params;
    const answer = await dataCall(d, backendApp.appId, 'DELETE', path`/schemas/${className}`);
    if (answer.code !== 200) {
      return redirectWith(d, reply, session, schemaHref(backendApp.appId, className), { kind: 'bad', title: `The class was not deleted: ${errorText(answer)}`, lines: [] });
    }
    return redirectWith(d, reply, session, appHref(backendApp.appId, 'schema'), { kind: 'ok', title: `Deleted the class ${className}.`, lines: [] });
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FieldType } from '../../data/types.js';
import type { BackendApp } from '../../platform/backendapps/service.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import { appCrumbs, appHeading, appHref, classList, classesOf, dataCall, errorText, type SchemaClass } from './appframe.js';
import { flashOf, formOf, ownApp, queryOf, redirectWith, sendNotFound, sendPage, sessionOf, type Dashboard } from './context.js';
import { count, html, path, query, type Html } from './html.js';
import { csrfField, notice } from './layout.js';
import { changesOf, classHref, columnsOf, objectForm } from './objectForm.js';
import { COLUMN_TYPES, FILTERS, cell, filterWhere, objectHref, type FilterOp } from './values.js';

type ClassParams = { Params: { appId: string; className: string } };
type ObjectParams = { Params: { appId: string; className: string; objectId: string } };

/** Page sizes the data browser offers. */
const PAGE_SIZES = [25, 50, 100, 200];
const DEFAULT_PAGE_SIZE = 50;

/** Sorting by these types means nothing. */
const UNSORTABLE = new Set(['Relation', 'ACL']);

/** What the table shows: the query options as the page's URL gives them. */
interface TableView {
  skip: number;
  limit: number;
  /** A field name, `-` in front for descending. */
  order: string;
  /** The filter: raw JSON `where`, or field, op and value of the simple filter. */
  where?: string;
  field?: string;
  op?: FilterOp;
  value?: string;
}

function viewOf(request: FastifyRequest): TableView {
  const q = queryOf(request);
  const limit = PAGE_SIZES.includes(Number(q.limit)) ? Number(q.limit) : DEFAULT_PAGE_SIZE;
  const skip = /^\d{1,9}$/.test(q.skip ?? '') ? Number(q.skip) : 0;
  const order = /^-?[A-Za-z][A-Za-z0-9_]*$/.test(q.order ?? '') ? q.order! : '-createdAt';
  const op = q.op && q.op in FILTERS ? (q.op as FilterOp) : undefined;
  return { skip, limit, order, where: q.where || undefined, field: q.field || undefined, op, value: q.value ?? '' };
}

/** The table's URL with some options changed. */
function viewHref(appId: string, className: string, view: TableView, change: Partial<TableView>): string {
  const v = { ...view, ...change };
  return (
    classHref(appId, className) +
    query({
      where: v.where,
      field: v.where ? undefined : v.field,
      op: v.where || !v.field ? undefined : v.op,
      value: v.where || !v.field ? undefined : v.value,
      order: v.order === '-createdAt' ? undefined : v.order,
      limit: v.limit === DEFAULT_PAGE_SIZE ? undefined : v.limit,
      skip: v.skip || undefined,
    })
  );
}

/** The `where` the view asks for, or the reason it cannot be used. */
function whereOf(view: TableView, cls: SchemaClass): { where?: Record<string, unknown>; error?: string } {
  if (view.where) {
    try {
      const where = JSON.parse(view.where) as unknown;
      if (typeof where !== 'object' || where === null || Array.isArray(where)) return { error: 'The filter must be a JSON object, e.g. {"score": {"$gt": 10}}.' };
      return { where: where as Record<string, unknown> };
    } catch {
      return { error: 'The filter is not valid JSON. Write it as in the REST API, e.g. {"score": {"$gt": 10}}.' };
    }
  }
  if (!view.field || !view.op) return {};
  if (!cls.fields[view.field]) return { error: `The class has no column ${view.field}.` };
  const built = filterWhere(view.field, view.op, view.value ?? '', cls.fields[view.field]);
  return 'error' in built ? { error: built.error } : { where: built.where };
}

function sortHeader(appId: string, className: string, view: TableView, name: string, type: FieldType): Html {
  const typeLine = html`<span class="type">${type.type}${type.targetClass ? html` &lt;${type.targetClass}&gt;` : ''}</span>`;
  if (UNSORTABLE.has(type.type)) return html`<th scope="col" data-field="${name}">${name}${typeLine}</th>`;
  const current = view.order === name ? 'ascending' : view.order === `-${name}` ? 'descending' : 'none';
  const next = current === 'ascending' ? `-${name}` : name;
  const arrow = current === 'ascending' ? '▲' : current === 'descending' ? '▼' : '';
  return html`<th scope="col" data-field="${name}" aria-sort="${current}"><a href="${viewHref(appId, className, view, { order: next, skip: 0 })}">${name}${
    arrow ? html` <span class="arrow" aria-hidden="true">${arrow}</span>` : ''
  }<span class="sr">, sort ${current === 'ascending' ? 'descending' : 'ascending'}</span>${typeLine}</a></th>`;
}

function pager(appId: string, className: string, view: TableView, total: number, shown: number, position: 'top' | 'bottom'): Html {
  const pages = Math.max(1, Math.ceil(total / view.limit));
  const page = Math.floor(view.skip / view.limit) + 1;
  const link = (label: string, skip: number, enabled: boolean, rel?: string) =>
    enabled
      ? html`<a href="${viewHref(appId, className, view, { skip })}"${rel ? html` rel="${rel}"` : ''}>${label}</a>`
      : html`<span class="off" aria-disabled="true">${label}</span>`;
  const last = (pages - 1) * view.limit;
  return html`<nav class="pager" aria-label="Pages (${position})">
  <span${position === 'top' ? html` id="range" aria-live="polite"` : ''}>${
    total === 0 ? 'No objects' : html`Objects ${count(Math.min(view.skip + 1, total))}–${count(view.skip + shown)} of ${count(total)} · page ${count(page)} of ${count(pages)}`
  }</span>
  <span class="links">${link('First', 0, view.skip > 0)}${link('Previous', Math.max(0, view.skip - view.limit), view.skip > 0, 'prev')}${link(
    'Next',
    view.skip + view.limit,
    view.skip + view.limit < total,
    'next',
  )}${link('Last', last, view.skip < last)}</span>
</nav>`;
}

function filterForm(app: BackendApp, cls: SchemaClass, view: TableView): Html {
  const columns = columnsOf(cls).filter(([, t]) => t.type !== 'Relation' && t.type !== 'ACL');
  const selected = view.where ? undefined : view.field;
  return html`<form method="get" action="${classHref(app.appId, cls.className)}" class="panel" role="search" aria-label="Filter ${cls.className}">
  <div class="row">
    <div class="field"><label for="filter-field">Column</label>
      <select id="filter-field" name="field">${columns.map(([name]) => html`<option${name === selected ? html` selected` : ''}>${name}</option>`)}</select></div>
    <div class="field"><label for="filter-op">Condition</label>
      <select id="filter-op" name="op">${Object.entries(FILTERS).map(
        ([op, label]) => html`<option value="${op}"${op === (view.op ?? 'eq') ? html` selected` : ''}>${label}</option>`,
      )}</select></div>
    <div class="field"><label for="filter-value">Value</label>
      <input id="filter-value" name="value" value="${view.where ? '' : (view.value ?? '')}"></div>
    <div class="field"><label for="page-size">Per page</label>
      <select id="page-size" name="limit">${PAGE_SIZES.map((n) => html`<option${n === view.limit ? html` selected` : ''}>${n}</option>`)}</select></div>
    <input type="hidden" name="order" value="${view.order}">
    <div class="field"><button type="submit">Filter</button></div>
    ${view.where || view.field ? html`<div class="field"><a class="button secondary" href="${classHref(app.appId, cls.className)}">Clear filter</a></div>` : ''}
  </div>
</form>
<details${view.where ? html` open` : ''}><summary>Filter with a JSON query</summary>
<form method="get" action="${classHref(app.appId, cls.className)}" class="panel" role="search" aria-label="JSON filter of ${cls.className}">
  <div class="field"><label for="filter-where">where (JSON)</label>
    <input id="filter-where" name="where" class="mono wide" value="${view.where ?? ''}" spellcheck="false" aria-describedby="filter-where-hint">
    <span class="hint" id="filter-where-hint">Any <code>where</code> of the REST API, e.g. <code>{"score": {"$gte": 10}}</code>.</span></div>
  <input type="hidden" name="order" value="${view.order}"><input type="hidden" name="limit" value="${view.limit}">
  <button type="submit" class="secondary">Run query</button>
</form></details>`;
}

function addColumnForm(session: DashboardSession, app: BackendApp, cls: SchemaClass, classNames: string[]): Html {
  return html`<details><summary>Add a column</summary>
<form method="post" action="${classHref(app.appId, cls.className)}/columns" class="panel">
  ${csrfField(session)}
  <div class="row">
    <div class="field"><label for="column-name">Name</label><input id="column-name" name="name" required pattern="[A-Za-z][A-Za-z0-9_]*" spellcheck="false" aria-describedby="column-name-hint">
      <span class="hint" id="column-name-hint">Letters, digits and _, starting with a letter.</span></div>
    <div class="field"><label for="column-type">Type</label>
      <select id="column-type" name="type">${COLUMN_TYPES.map((t) => html`<option>${t}</option>`)}</select></div>
    <div class="field"><label for="column-target">Target class</label>
      <input id="column-target" name="targetClass" list="class-names" spellcheck="false" aria-describedby="column-target-hint">
      <datalist id="class-names">${classNames.map((c) => html`<option value="${c}"></option>`)}</datalist>
      <span class="hint" id="column-target-hint">For Pointer and Relation only.</span></div>
    <div class="field"><button type="submit">Add column</button></div>
  </div>
</form></details>`;
}

function addClassForm(session: DashboardSession, app: BackendApp): Html {
  return html`<details><summary>Add a class</summary>
<form method="post" action="${appHref(app.appId, 'data')}" class="panel">
  ${csrfField(session)}
  <div class="field"><label for="class-name">Class name</label><input id="class-name" name="className" required pattern="[A-Za-z][A-Za-z0-9_]*" spellcheck="false"></div>
  <button type="submit">Add class</button>
</form></details>`;
}

async function classPage(d: Dashboard, request: FastifyRequest, reply: FastifyReply, app: BackendApp, className: string): Promise<FastifyReply> {
  const session = sessionOf(request);
  const classes = await classesOf(d, app.appId);
  const cls = classes.find((c) => c.className === className);
  if (!cls) return sendNotFound(reply, session, 'class');
  const view = viewOf(request);
  const columns = columnsOf(cls);
  const { where, error } = whereOf(view, cls);
  let rows: Array<Record<string, unknown>> = [];
  let total = 0;
  let problem = error;
  if (!problem) {
    const order = view.order.replace(/^-/, '') === 'objectId' ? view.order : `${view.order},objectId`;
    const answer = await dataCall(
      d,
      app.appId,
      'GET',
      path`/classes/${className}` + query({ count: 1, limit: view.limit, skip: view.skip, order, where: where ? JSON.stringify(where) : undefined }),
    );
    if (answer.code === 200) {
      const body = answer.body as { results: Array<Record<string, unknown>>; count: number };
      rows = body.results;
      total = body.count;
    } else problem = errorText(answer);
  }

  const table = html`<div class="table-wrap" role="region" aria-labelledby="table-caption" tabindex="0">
<table id="objects">
  <caption id="table-caption" class="sr">Objects of ${className}</caption>
  <thead><tr>${columns.map(([name, type]) => sortHeader(app.appId, className, view, name, type))}</tr></thead>
  <tbody>${
    rows.length === 0
      ? html`<tr><td colspan="${columns.length}" class="empty">${problem ? 'No results.' : where ? 'No object matches the filter.' : 'This class has no objects yet.'}</td></tr>`
      : rows.map(
          (row) => html`<tr>${columns.map(([name, type]) => {
            const objectId = String(row.objectId);
            if (name === 'objectId') return html`<td class="cell mono"><a href="${objectHref(app.appId, className, objectId)}" aria-label="Object ${objectId}, edit">${objectId}</a></td>`;
            const value = type.type === 'Relation' && row[name] === undefined ? { __type: 'Relation', className: type.targetClass } : row[name];
            return html`<td class="cell${type.type === 'Number' ? ' num' : ''}">${cell(value, type, { appId: app.appId, className, objectId, field: name })}</td>`;
          })}</tr>`,
        )
  }</tbody>
</table></div>`;

  return sendPage(reply, problem ? 400 : 200, {
    title: `${className} · ${app.appName}`,
    session,
    crumbs: appCrumbs(app, { label: 'Data browser', href: appHref(app.appId, 'data') }, { label: className }),
    heading: appHeading(app, 'data'),
    body: html`<div class="split">
<div>${classList(app.appId, classes, className, 'data')}${addClassForm(session, app)}</div>
<div>
  <div class="actions"><h2 class="sr">${className}</h2>
    <strong class="mono">${className}</strong> <span class="muted">${count(cls.count ?? 0)} objects</span>
    ${className === '_JobStatus' ? '' : html`<a class="button" href="${classHref(app.appId, className)}/new">Add an object</a>`}
    <a class="button secondary" href="${appHref(app.appId, 'schema')}/${encodeURIComponent(className)}">Schema and permissions</a>
  </div>
  ${flashOf(d, request)}
  ${problem ? notice('bad', problem) : ''}
  ${filterForm(app, cls, view)}
  ${addColumnForm(session, app, cls, classes.map((c) => c.className))}
  ${pager(app.appId, className, view, total, rows.length, 'top')}
  ${table}
  ${total > view.limit ? pager(app.appId, className, view, total, rows.length, 'bottom') : ''}
</div></div>`,
  });
}

async function objectPage(
  d: Dashboard,
  request: FastifyRequest,
  reply: FastifyReply,
  app: BackendApp,
  className: string,
  objectId: string | undefined,
  state: { status: number; errors?: string[]; given?: Record<string, string> } = { status: 200 },
): Promise<FastifyReply> {
  const session = sessionOf(request);
  const classes = await classesOf(d, app.appId, false);
  const cls = classes.find((c) => c.className === className);
  if (!cls) return sendNotFound(reply, session, 'class');
  let object: Record<string, unknown> | undefined;
  if (objectId !== undefined) {
    const answer = await dataCall(d, app.appId, 'GET', path`/classes/${className}/${objectId}`);
    if (answer.code !== 200) return sendNotFound(reply, session, 'object');
    object = answer.body as Record<string, unknown>;
  }
  const title = object ? `${className} ${objectId}` : `New ${className} object`;
  return sendPage(reply, state.status, {
    title: `${title} · ${app.appName}`,
    session,
    crumbs: appCrumbs(app, { label: 'Data browser', href: appHref(app.appId, 'data') }, { label: className, href: classHref(app.appId, className) }, { label: object ? objectId! : 'New object' }),
    heading: appHeading(app, 'data'),
    body: html`<h2>${object ? html`<span class="mono">${className}</span> <span class="mono">${objectId}</span>` : html`New <span class="mono">${className}</span> object`}</h2>
${flashOf(d, request)}
${state.errors?.length ? notice('bad', 'Nothing was saved:', state.errors) : ''}
<p class="hint">Empty fields are left unset.</p>
${objectForm(session, app, cls, object, state.given)}
${object && className !== '_JobStatus'
  ? html`<form method="post" action="${objectHref(app.appId, className, objectId!)}/delete" data-confirm="Delete the ${className} object ${objectId}? This cannot be undone.">
  ${csrfField(session)}<button type="submit" class="danger">Delete this object</button></form>`
  : ''}
<p><a href="${classHref(app.appId, className)}">Back to ${className}</a></p>`,
  });
}

/**
 * The data browser: classes with their counts, a page of a class's objects (sorting, filtering,
 * paging), an object's form (create, edit, delete), new classes and columns. Every read and write
 * goes through the app's data API with its master key (`DataApiService.call`).
 */
export function dataRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<{ Params: { appId: string } }>('/apps/:appId/data', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const classes = await classesOf(d, backendApp.appId);
    const first = classes.find((c) => !c.className.startsWith('_')) ?? classes[0];
    if (first) return reply.code(303).header('location', classHref(backendApp.appId, first.className) + (queryOf(request).flash ? query({ flash: queryOf(request).flash }) : '')).send();
    return sendPage(reply, 200, {
      title: `Data browser · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Data browser' }),
      heading: appHeading(backendApp, 'data'),
      body: html`${flashOf(d, request)}<p class="empty">This app has no classes yet: save an object through the data API, or add a class.</p>${addClassForm(session, backendApp)}`,
    });
  });

  app.post<{ Params: { appId: string } }>('/apps/:appId/data', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const className = (formOf(request).className ?? '').trim();
    const answer = await dataCall(d, backendApp.appId, 'POST', path`/schemas/${className}`, { className });
    if (answer.code !== 200 && answer.code !== 201) {
      return redirectWith(d, reply, session, appHref(backendApp.appId, 'data'), { kind: 'bad', title: `The class was not added: ${errorText(answer)}`, lines: [] });
    }
    return redirectWith(d, reply, session, classHref(backendApp.appId, className), { kind: 'ok', title: `Added the class ${className}.`, lines: [] });
  });

  app.get<ClassParams>('/apps/:appId/data/:className', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return classPage(d, request, reply, backendApp, request.params.className);
  });

  app.post<ClassParams>('/apps/:appId/data/:className/columns', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className } = request.params;
    const form = formOf(request);
    const name = (form.name ?? '').trim();
    const type = form.type ?? '';
    const definition: Record<string, unknown> = { type };
    if (type === 'Pointer' || type === 'Relation') definition.targetClass = (form.targetClass ?? '').trim();
    const answer = await dataCall(d, backendApp.appId, 'PUT', path`/schemas/${className}`, { fields: { [name]: definition } });
    const back = classHref(backendApp.appId, className);
    if (answer.code !== 200) return redirectWith(d, reply, session, back, { kind: 'bad', title: `The column was not added: ${errorText(answer)}`, lines: [] });
    return redirectWith(d, reply, session, back, { kind: 'ok', title: `Added the column ${name} (${type}${definition.targetClass ? ` of ${String(definition.targetClass)}` : ''}).`, lines: [] });
  });

  app.get<ClassParams>('/apps/:appId/data/:className/new', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return objectPage(d, request, reply, backendApp, request.params.className, undefined);
  });

  app.post<ClassParams>('/apps/:appId/data/:className/new', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className } = request.params;
    const cls = (await classesOf(d, backendApp.appId, false)).find((c) => c.className === className);
    if (!cls) return sendNotFound(reply, session, 'class');
    const form = formOf(request);
    const { body, errors } = changesOf(cls, form, undefined);
    if (errors.length) return objectPage(d, request, reply, backendApp, className, undefined, { status: 400, errors, given: form });
    const answer = await dataCall(d, backendApp.appId, 'POST', path`/classes/${className}`, body);
    if (answer.code !== 201 && answer.code !== 200) return objectPage(d, request, reply, backendApp, className, undefined, { status: 400, errors: [errorText(answer)], given: form });
    const objectId = String((answer.body as { objectId: string }).objectId);
    return redirectWith(d, reply, session, objectHref(backendApp.appId, className, objectId), { kind: 'ok', title: `Created the object ${objectId}.`, lines: [] });
  });

  app.get<ObjectParams>('/apps/:appId/data/:className/:objectId', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return objectPage(d, request, reply, backendApp, request.params.className, request.params.objectId);
  });

  app.post<ObjectParams>('/apps/:appId/data/:className/:objectId', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className, objectId } = request.params;
    const cls = (await classesOf(d, backendApp.appId, false)).find((c) => c.className === className);
    if (!cls) return sendNotFound(reply, session, 'class');
    const current = await dataCall(d, backendApp.appId, 'GET', path`/classes/${className}/${objectId}`);
    if (current.code !== 200) return sendNotFound(reply, session, 'object');
    const form = formOf(request);
    const { body, errors } = changesOf(cls, form, current.body as Record<string, unknown>);
    if (errors.length) return objectPage(d, request, reply, backendApp, className, objectId, { status: 400, errors, given: form });
    const here = objectHref(backendApp.appId, className, objectId);
    if (Object.keys(body).length === 0) return redirectWith(d, reply, session, here, { kind: 'ok', title: 'Nothing changed.', lines: [] });
    const answer = await dataCall(d, backendApp.appId, 'PUT', path`/classes/${className}/${objectId}`, body);
    if (answer.code !== 200) return objectPage(d, request, reply, backendApp, className, objectId, { status: 400, errors: [errorText(answer)], given: form });
    return redirectWith(d, reply, session, here, { kind: 'ok', title: `Saved: ${Object.keys(body).join(', ')}.`, lines: [] });
  });

  app.post<ObjectParams>('/apps/:appId/data/:className/:objectId/delete', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const { className, objectId } = request.params;
    const answer = await dataCall(d, backendApp.appId, 'DELETE', path`/classes/${className}/${objectId}`);
    if (answer.code !== 200) {
      return redirectWith(d, reply, session, objectHref(backendApp.appId, className, objectId), { kind: 'bad', title: `The object was not deleted: ${errorText(answer)}`, lines: [] });
    }
    return redirectWith(d, reply, session, classHref(backendApp.appId, className), { kind: 'ok', title: `Deleted the object ${objectId}.`, lines: [] });
  });
}

import type { FieldType } from '../../data/types.js';
import type { BackendApp } from '../../platform/backendapps/service.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import type { SchemaClass } from './appframe.js';
import { html, path, type Html, type HtmlValue } from './html.js';
import { csrfField } from './layout.js';
import { READ_ONLY_FIELDS, cell, editable, fieldInput, objectHref, parseInput, relationHref, typeHint, valueText } from './values.js';

/**
 * The data browser's object form (a create or an edit of one object with Parse's types) and what a
 * submitted form changes. The routes that show and accept it are in data.ts.
 */

export const classHref = (appId: string, className: string) => path`/dashboard/apps/${appId}/data/${className}`;

/** Columns in the order Parse Dashboard shows them: objectId, the class's own fields, then the built-in dates and ACL. */
export function columnsOf(cls: SchemaClass): Array<[string, FieldType]> {
  const own = Object.entries(cls.fields).filter(([name]) => !['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(name));
  const builtIn = (name: string): Array<[string, FieldType]> => (cls.fields[name] ? [[name, cls.fields[name]!]] : []);
  return [...builtIn('objectId'), ...own, ...builtIn('createdAt'), ...builtIn('updatedAt'), ...builtIn('ACL')];
}

/** The object form: one control per field (values as given, or the object's). */
export function objectForm(
  session: DashboardSession,
  app: BackendApp,
  cls: SchemaClass,
  object: Record<string, unknown> | undefined,
  given: Record<string, string> | undefined,
): Html {
  const className = cls.className;
  const objectId = object ? String(object.objectId) : undefined;
  const fields = columnsOf(cls);
  const controls: HtmlValue[] = fields.map(([name, type], i) => {
    const id = `field-${i}`;
    const hintId = `${id}-hint`;
    const label = html`<label for="${id}">${name} <span class="hint">${type.type}${type.targetClass ? ` <${type.targetClass}>` : ''}</span></label>`;
    if (READ_ONLY_FIELDS.has(name)) {
      if (!object) return '';
      return html`<div class="field"><span class="label"><strong>${name}</strong></span><code>${valueText(object[name], type)}</code></div>`;
    }
    if (!editable(name, type)) {
      if (!object) return '';
      const value = type.type === 'Relation' ? { __type: 'Relation', className: type.targetClass } : object[name];
      return html`<div class="field"><strong>${name} <span class="hint">${type.type}</span></strong>
        <span>${cell(value, type, { appId: app.appId, className, objectId: objectId!, field: name })}</span>
        ${type.type === 'Relation' && type.targetClass ? html`<a class="small" href="${relationHref({ appId: app.appId, className, objectId: objectId!, field: name }, type.targetClass)}">Browse related objects</a>` : ''}</div>`;
    }
    if (className === '_User' && name === 'password') {
      return html`<div class="field"><label for="${id}">password</label>
        <input id="${id}" name="f.password" type="password" autocomplete="new-password" aria-describedby="${hintId}">
        <span class="hint" id="${hintId}">${object ? 'A new password; leave empty to keep the current one.' : 'The new user\'s password.'}</span></div>`;
    }
    const control = fieldInput(name, type, object?.[name], id, hintId, given?.[`f.${name}`]);
    const pointerLink =
      type.type === 'Pointer' && object?.[name] && typeof (object[name] as { objectId?: unknown }).objectId === 'string'
        ? html` <a class="small" href="${objectHref(app.appId, type.targetClass ?? '', String((object[name] as { objectId: string }).objectId))}">Open the ${type.targetClass} object</a>`
        : '';
    return html`<div class="field">${label}${control}<span class="hint" id="${hintId}">${typeHint(type)}${pointerLink}</span></div>`;
  });
  const action = object ? objectHref(app.appId, className, objectId!) : `${classHref(app.appId, className)}/new`;
  return html`<form method="post" action="${action}" class="panel" aria-label="${object ? `Object ${objectId}` : `New ${className} object`}">
  ${csrfField(session)}
  ${controls}
  <button type="submit">${object ? 'Save changes' : 'Create object'}</button>
</form>`;
}

/** JSON with object keys sorted, to compare values whatever the order of their keys. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

/** The body of a create or update from the form: changed fields only (for an update), or the reasons it cannot be sent. */
export function changesOf(cls: SchemaClass, form: Record<string, string>, object: Record<string, unknown> | undefined): { body: Record<string, unknown>; errors: string[] } {
  const body: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const [name, type] of columnsOf(cls)) {
    if (!editable(name, type)) continue;
    const raw = form[`f.${name}`];
    if (raw === undefined) continue;
    const parsed = parseInput(raw, name, type);
    if ('error' in parsed) {
      errors.push(parsed.error);
      continue;
    }
    const current = object?.[name];
    if ('unset' in parsed) {
      if (current !== undefined && !(cls.className === '_User' && name === 'password')) body[name] = { __op: 'Delete' };
      continue;
    }
    if (current === undefined || canonical(current) !== canonical(parsed.value)) body[name] = parsed.value;
  }
  return { body, errors };
}

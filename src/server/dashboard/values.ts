import type { FieldType } from '../../data/types.js';
import { html, path, query, type Html } from './html.js';

/**
 * Parse values in the data browser: how a value of each schema type shows in a table cell, which
 * form control edits it, how the control's text becomes a value again, and the filters a person
 * can pick. Values are as the data API answers them (`{"__type": "Date", "iso": ...}` and so on).
 */

/** Types the schema editor offers for a new column (Parse's field types; ACL is built in). */
export const COLUMN_TYPES = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'Pointer', 'Relation', 'File', 'GeoPoint', 'Polygon', 'Bytes'] as const;

/** Fields shown but never set from a form: the data API manages them. */
export const READ_ONLY_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt']);

/** Types that are shown but not edited in the object form. */
const NOT_EDITABLE = new Set(['File', 'Relation']);

/** Whether a field of this type can be set in the object form. */
export const editable = (field: string, type: FieldType): boolean => !READ_ONLY_FIELDS.has(field) && !NOT_EDITABLE.has(type.type);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where an object's value is shown: enough to link pointers and relations. */
export interface CellContext {
  appId: string;
  className: string;
  objectId: string;
  field: string;
}

/** The data browser's URL of one object. */
export const objectHref = (appId: string, className: string, objectId: string): string =>
  path`/dashboard/apps/${appId}/data/${className}/${objectId}`;

/** The data browser's URL of the objects related to `ctx`'s object through its Relation field. */
export const relationHref = (ctx: CellContext, targetClass: string): string =>
  path`/dashboard/apps/${ctx.appId}/data/${targetClass}` +
  query({ where: JSON.stringify({ $relatedTo: { object: { __type: 'Pointer', className: ctx.className, objectId: ctx.objectId }, key: ctx.field } }) });

const short = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** A value as plain text, for a cell's tooltip and for form controls. */
export function valueText(value: unknown, type: FieldType | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isObject(value)) {
    switch (value.__type) {
      case 'Date':
        return String(value.iso);
      case 'Pointer':
        return String(value.objectId);
      case 'GeoPoint':
        return `${String(value.latitude)}, ${String(value.longitude)}`;
      default:
    }
  }
  return type?.type === 'String' ? String(value) : JSON.stringify(value);
}

/** A value in a table cell: pointers and relations link to their objects, files to their URL. */
export function cell(value: unknown, type: FieldType | undefined, ctx: CellContext): Html {
  if (value === undefined) return html`<span class="null">not set</span>`;
  if (value === null) return html`<span class="null">null</span>`;
  if (isObject(value)) {
    if (value.__type === 'Pointer' && typeof value.className === 'string' && typeof value.objectId === 'string') {
      return html`<a href="${objectHref(ctx.appId, value.className, value.objectId)}">${value.className} ${value.objectId}</a>`;
    }
    if (value.__type === 'Relation') {
      const target = typeof value.className === 'string' ? value.className : (type?.targetClass ?? '');
      return html`<a href="${relationHref(ctx, target)}">${target} relation</a>`;
    }
    if (value.__type === 'File' && typeof value.url === 'string') {
      return html`<a href="${value.url}" rel="noopener noreferrer" target="_blank">${String(value.name ?? 'file')}</a>`;
    }
  }
  const text = valueText(value, type);
  if (type?.type === 'Date' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(text)) {
    return html`<time datetime="${text}" title="${text}">${text.slice(0, 10)} ${text.slice(11, 19)}</time>`;
  }
  return html`<span title="${short(text, 2000)}">${short(text)}</span>`;
}

/**
 * The form control that edits a field; `id` is also its label's `for`. `given` is text a person
 * typed, shown again instead of `value` when a form comes back with an error.
 */
export function fieldInput(name: string, type: FieldType, value: unknown, id: string, describedBy: string, given?: string): Html {
  const fieldName = `f.${name}`;
  const aria = html` aria-describedby="${describedBy}"`;
  const json = value === undefined ? '' : JSON.stringify(value, null, 2);
  const text = given ?? (type.type === 'String' || type.type === 'Number' || type.type === 'Date' || type.type === 'Pointer' || type.type === 'GeoPoint' ? valueText(value, type) : json);
  switch (type.type) {
    case 'Boolean': {
      const on = given === undefined ? value : given === 'true' ? true : given === 'false' ? false : undefined;
      return html`<select id="${id}" name="${fieldName}"${aria}>
        <option value=""${on === undefined ? html` selected` : ''}>not set</option>
        <option value="true"${on === true ? html` selected` : ''}>true</option>
        <option value="false"${on === false ? html` selected` : ''}>false</option></select>`;
    }
    case 'Number':
      return html`<input id="${id}" name="${fieldName}" inputmode="decimal" value="${text}"${aria}>`;
    case 'Date':
      return html`<input id="${id}" name="${fieldName}" class="wide" placeholder="2026-11-21T09:30:00.000Z" value="${text}"${aria}>`;
    case 'Pointer':
      return html`<input id="${id}" name="${fieldName}" placeholder="objectId of a ${type.targetClass ?? ''}" value="${text}" spellcheck="false"${aria}>`;
    case 'GeoPoint':
      return html`<input id="${id}" name="${fieldName}" placeholder="48.85, 2.35" value="${text}"${aria}>`;
    case 'String':
      return text.length > 80 || text.includes('\n')
        ? html`<textarea id="${id}" name="${fieldName}" rows="4"${aria}>${text}</textarea>`
        : html`<input id="${id}" name="${fieldName}" class="wide" value="${text}"${aria}>`;
    default:
      return html`<textarea id="${id}" name="${fieldName}" rows="${Math.min(12, Math.max(2, text.split('\n').length))}" spellcheck="false"${aria}>${text}</textarea>`;
  }
}

/** What a form control's text says: a value, "not set", or a sentence on what is wrong. */
export type Parsed = { value: unknown } | { unset: true } | { error: string };

/** A hint under a field's control: the format it takes. */
export function typeHint(type: FieldType): string {
  switch (type.type) {
    case 'String':
      return 'Text. Leave empty to unset.';
    case 'Number':
      return 'A number, e.g. 42 or 3.5.';
    case 'Boolean':
      return 'true or false.';
    case 'Date':
      return 'An ISO 8601 date and time, e.g. 2026-11-21T09:30:00.000Z.';
    case 'Pointer':
      return `The objectId of a ${type.targetClass ?? 'object'}.`;
    case 'GeoPoint':
      return 'Latitude and longitude, e.g. 48.85, 2.35.';
    case 'Array':
      return 'JSON array, e.g. ["a", "b"].';
    case 'Object':
      return 'JSON object, e.g. {"key": "value"}.';
    case 'ACL':
      return 'JSON, e.g. {"*": {"read": true}}. Leave empty for public read and write.';
    case 'Polygon':
      return 'JSON list of [latitude, longitude] points.';
    case 'Bytes':
      return 'Base64 text.';
    default:
      return '';
  }
}

function parseJson(raw: string, label: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(raw) };
  } catch {
    return { error: `${label} must be valid JSON.` };
  }
}

/** Reads a form control's text as a value of `type` (empty text means "not set"). */
export function parseInput(raw: string, field: string, type: FieldType): Parsed {
  if (type.type === 'String') return raw === '' ? { unset: true } : { value: raw };
  const text = raw.trim();
  if (text === '') return { unset: true };
  switch (type.type) {
    case 'Number': {
      const n = Number(text);
      return Number.isFinite(n) ? { value: n } : { error: `${field} must be a number, not "${short(text, 40)}".` };
    }
    case 'Boolean':
      return text === 'true' ? { value: true } : text === 'false' ? { value: false } : { error: `${field} must be true or false.` };
    case 'Date': {
      const ms = Date.parse(text);
      return Number.isNaN(ms) ? { error: `${field} must be a date such as 2026-11-21T09:30:00.000Z.` } : { value: { __type: 'Date', iso: new Date(ms).toISOString() } };
    }
    case 'Pointer':
      return /^[A-Za-z0-9_-]{1,64}$/.test(text)
        ? { value: { __type: 'Pointer', className: type.targetClass, objectId: text } }
        : { error: `${field} must be the objectId of a ${type.targetClass ?? 'object'}.` };
    case 'GeoPoint': {
      const pair = /^(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)$/.exec(text);
      if (pair) return { value: { __type: 'GeoPoint', latitude: Number(pair[1]), longitude: Number(pair[2]) } };
      const parsed = parseJson(text, field);
      if ('error' in parsed) return { error: `${field} must be "latitude, longitude", e.g. 48.85, 2.35.` };
      return isObject(parsed.value) ? { value: { ...parsed.value, __type: 'GeoPoint' } } : { error: `${field} must be "latitude, longitude".` };
    }
    case 'Polygon': {
      const parsed = parseJson(text, field);
      if ('error' in parsed) return parsed;
      return Array.isArray(parsed.value) ? { value: { __type: 'Polygon', coordinates: parsed.value } } : parsed;
    }
    case 'Bytes': {
      if (/^[A-Za-z0-9+/=\s]+$/.test(text)) return { value: { __type: 'Bytes', base64: text.replace(/\s+/g, '') } };
      return parseJson(text, field);
    }
    case 'Array': {
      const parsed = parseJson(text, field);
      if ('error' in parsed) return parsed;
      return Array.isArray(parsed.value) ? parsed : { error: `${field} must be a JSON array, e.g. ["a", "b"].` };
    }
    case 'Object':
    case 'ACL': {
      const parsed = parseJson(text, field);
      if ('error' in parsed) return parsed;
      return isObject(parsed.value) ? parsed : { error: `${field} must be a JSON object.` };
    }
    default:
      return parseJson(text, field);
  }
}

/** Filter operators of the data browser, by their query-string name. */
export const FILTERS = {
  eq: 'equals',
  ne: 'does not equal',
  contains: 'contains',
  starts: 'starts with',
  gt: 'is greater than',
  lt: 'is less than',
  exists: 'is set',
  missing: 'is not set',
} as const;

export type FilterOp = keyof typeof FILTERS;

/** A PCRE literal as the Parse SDKs quote it. */
const quote = (text: string) => `\\Q${text.replace(/\\E/g, '\\E\\\\E\\Q')}\\E`;

/**
 * The `where` of a simple filter: `field` `op` `raw`, the text read as a value of the field's type
 * (contains and starts with match text).
 */
export function filterWhere(field: string, op: FilterOp, raw: string, type: FieldType | undefined): { where: Record<string, unknown> } | { error: string } {
  if (op === 'exists') return { where: { [field]: { $exists: true } } };
  if (op === 'missing') return { where: { [field]: { $exists: false } } };
  if (op === 'contains') return { where: { [field]: { $regex: quote(raw), $options: 'i' } } };
  if (op === 'starts') return { where: { [field]: { $regex: `^${quote(raw)}` } } };
  let value: unknown = raw;
  if (field === 'createdAt' || field === 'updatedAt' || type?.type === 'Date') {
    const parsed = parseInput(raw, field, { type: 'Date' });
    if ('error' in parsed) return parsed;
    value = 'value' in parsed ? parsed.value : undefined;
  } else if (type && type.type !== 'String' && field !== 'objectId') {
    const parsed = parseInput(raw, field, type);
    if ('error' in parsed) return parsed;
    value = 'value' in parsed ? parsed.value : null;
  }
  const ops: Record<string, string> = { ne: '$ne', gt: '$gt', lt: '$lt' };
  return { where: { [field]: op === 'eq' ? value : { [ops[op]!]: value } } };
}

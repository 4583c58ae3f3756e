import type { StoredRow, StoredRowText } from '../storage/adapter.js';
import type { FieldType } from '../types.js';
import { isPlainObject } from '../values.js';

/** Turns a stored file name into the URL clients download it from. */
export type FileUrl = (name: string) => string;

/**
 * An object as the data API answers it (Parse REST guide, "Retrieving Objects"): objectId,
 * createdAt, updatedAt, the data fields, `ACL` when set, and each Relation field as
 * `{__type: "Relation", className}`. Internal keys (those starting with `_`, such as a user's
 * password hash) never leave.
 */
export function objectJson(row: StoredRow, fields: Readonly<Record<string, FieldType>> | undefined, fileUrl: FileUrl): Record<string, unknown> {
  const out: Record<string, unknown> = { objectId: row.objectId, createdAt: row.createdAt, updatedAt: row.updatedAt };
  for (const [key, value] of Object.entries(row.data)) {
    if (key.startsWith('_')) continue;
    out[key] = isPlainObject(value) && value.__type === 'File' && typeof value.name === 'string' ? { __type: 'File', name: value.name, url: fileUrl(value.name) } : value;
  }
  for (const [field, type] of Object.entries(fields ?? {})) {
    if (type.type === 'Relation') out[field] = { __type: 'Relation', className: type.targetClass };
  }
  if (row.acl !== null) out.ACL = row.acl;
  return out;
}

/**
 * The JSON text of objectJson's answer for a row read as text (StoredRowText), built around the
 * row's stored JSON rather than by parsing and writing it again: objectId, createdAt and updatedAt,
 * the data's members as stored, then `ACL`. Only for a row objectJson would leave as stored: of a
 * class without File or Relation fields whose data holds no internal `_` key (engine.ts
 * `asTextApplies`; field names start with a letter, types.ts FIELD_NAME).
 */
export function storedRowJson(row: StoredRowText): string {
  const { data, acl } = row;
  let text = `{"objectId":${JSON.stringify(row.objectId)},"createdAt":${JSON.stringify(row.createdAt)},"updatedAt":${JSON.stringify(row.updatedAt)}`;
  // Both databases give an object's text as `{...}`; anything else is parsed, to be safe.
  const members = data.length >= 2 && data.charCodeAt(0) === 123 && data.charCodeAt(data.length - 1) === 125 ? data.slice(1, -1) : JSON.stringify(JSON.parse(data)).slice(1, -1);
  if (members.trim() !== '') text += `,${members}`;
  // Stores write no ACL as SQL NULL; a JSON `null` would be none too, as objectJson reads it.
  if (acl !== null && acl !== 'null') text += `,"ACL":${acl}`;
  return `${text}}`;
}

/** Fields `keys` always selects and `excludeKeys` cannot remove (Parse Server's AlwaysSelectedKeys). */
const ALWAYS = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

/**
 * Keeps only `keys` (top-level names of dotted keys) and the fields every answer has (ALWAYS); then
 * removes `excludeKeys`. Parse's `keys` and `excludeKeys` query parameters; what dotted keys select
 * inside included objects is objects/include.ts's.
 */
export function selectKeys(object: Record<string, unknown>, keys: readonly string[] | undefined, excludeKeys: readonly string[] | undefined): Record<string, unknown> {
  let out = object;
  if (keys) {
    const top = new Set(keys.map((k) => k.split('.')[0]!));
    out = Object.fromEntries(Object.entries(object).filter(([k]) => ALWAYS.has(k) || top.has(k)));
  }
  if (excludeKeys?.length) {
    out = Object.fromEntries(Object.entries(out).filter(([k]) => ALWAYS.has(k) || !excludeKeys.includes(k)));
  }
  return out;
}


import type { StoredRow } from '../storage/adapter.js';
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


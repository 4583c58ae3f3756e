import type { Auth } from '../auth/context.js';
import type { FindOptions, StoredRow } from '../storage/adapter.js';
import type { FieldType } from '../types.js';
import { isPlainObject } from '../values.js';
import type { FindParams } from './findParams.js';
import { selectKeys } from './output.js';

/** What a query includes and selects, after `includeAll` and nested keys are taken into account. */
export interface Selection {
  /** Include paths, split on dots, each after its parents (`["a"]` before `["a","b"]`). */
  paths: string[][];
  /** The top-level `keys`, with the fields `includeAll` adds; undefined for all fields. */
  keys?: string[];
  excludeKeys?: string[];
}

/**
 * Plans a query's `include` as Parse Server does (RestQuery): every prefix of each path; the parent
 * of each dotted `keys` or `excludeKeys` entry (`keys=author.name` includes `author`); and with
 * `includeAll` (or `include=*`) every Pointer and Array field of the class, which `keys` then also
 * selects.
 */
export function planSelection(params: Pick<FindParams, 'include' | 'includeAll' | 'keys' | 'excludeKeys'>, fields: Readonly<Record<string, FieldType>> | undefined): Selection {
  const dotted = (keys: readonly string[] | undefined) => keys?.some((k) => k.includes('.')) ?? false;
  // Most queries include nothing: answer those without building sets.
  if (!params.include.length && !params.includeAll && !dotted(params.keys) && !dotted(params.excludeKeys)) {
    return { paths: [], keys: params.keys, excludeKeys: params.excludeKeys };
  }
  const wanted = new Set<string>();
  const add = (path: string) => {
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) wanted.add(parts.slice(0, i).join('.'));
  };
  params.include.forEach(add);
  for (const key of [...(params.keys ?? []), ...(params.excludeKeys ?? [])]) if (key.includes('.')) add(key.slice(0, key.lastIndexOf('.')));
  let keys = params.keys;
  if (params.includeAll) {
    const followed = Object.entries(fields ?? {})
      .filter(([, type]) => type.type === 'Pointer' || type.type === 'Array')
      .map(([field]) => field);
    followed.forEach(add);
    if (keys) keys = [...new Set([...keys, ...followed])];
  }
  const paths = [...wanted].map((p) => p.split('.')).sort((a, b) => a.length - b.length);
  return { paths, keys, excludeKeys: params.excludeKeys };
}

/**
 * The `keys` and `excludeKeys` that apply to objects included at `path` (Parse Server's includePath):
 * of each key that continues `path`, the next name; of each excluded key exactly one name longer
 * than `path`, that name. Undefined when none applies.
 */
function nestedSelection(selection: Selection, path: readonly string[]): { keys?: string[]; excludeKeys?: string[] } {
  const below = (key: string) => {
    const parts = key.split('.');
    return parts.length > path.length && path.every((p, i) => parts[i] === p) ? parts : undefined;
  };
  const keys = new Set<string>();
  for (const key of selection.keys ?? []) {
    const parts = below(key);
    if (parts) keys.add(parts[path.length]!);
  }
  const excluded = new Set<string>();
  for (const key of selection.excludeKeys ?? []) {
    const parts = below(key);
    if (parts?.length === path.length + 1) excluded.add(parts[path.length]!);
  }
  return { keys: keys.size ? [...keys] : undefined, excludeKeys: excluded.size ? [...excluded] : undefined };
}

/**
 * Replaces pointers on the include paths with the objects they point to, as Parse does:
 * `{__type: "Object", className, ...fields}`, keeping only the nested `keys` and dropping the nested
 * `excludeKeys` that reach the path (nestedSelection).
 *
 * A pointer whose object cannot be read, because it was deleted, its ACL keeps it from the caller or
 * it is another user's session (DataEngine.scopeWhere), is removed: the field is left out, and an
 * array loses that element (Parse Server's replacePointers). Pointers to a class the caller may not
 * read at all stay pointers: every object of a class whose CLP `get` refuses, or that clients may not
 * query (`_Installation`, the master-only classes, `_Session` without a user: DataEngine.mayFind).
 * Parse Server refuses the whole request there; Backyard leaves the pointer
 * (docs/parse-differences.md). This holds at every depth, since a deeper path only follows objects
 * resolved at the one above. One query per class and path depth.
 */
/**
 * What `include` reads through: the master view's rows and the checking face's verdicts for the
 * caller (DataEngine builds it; this module knows neither, so that the engine can call it).
 */
export interface IncludeSource {
  schema: { has(className: string): boolean };
  /** Rows of a class without ACL checks (DataStore.rows); principals in `options` filter them. */
  rows(className: string, options: FindOptions): Promise<StoredRow[]>;
  /** DataEngine.mayFind. */
  mayFind(className: string, auth: Auth): boolean;
  /** Whether class-level permissions let the caller `get` on the class (DataEngine.allows). */
  mayGet(className: string, auth: Auth): boolean;
  /** DataEngine.scopeWhere. */
  scopeWhere(className: string, where: Record<string, unknown>, auth: Auth): Record<string, unknown>;
  /** A row in API form as the caller may see it (DataEngine.toJson, then DataEngine.protect). */
  present(className: string, row: StoredRow, auth: Auth): Record<string, unknown>;
}

export async function includePointers(source: IncludeSource, objects: Record<string, unknown>[], selection: Selection, auth: Auth): Promise<void> {
  for (const path of selection.paths) {
    const holders = collect(objects, path);
    if (holders.length === 0) continue;
    const nested = nestedSelection(selection, path);
    const byClass = new Map<string, Set<string>>();
    for (const { value } of holders) byClass.set(value.className as string, (byClass.get(value.className as string) ?? new Set()).add(value.objectId as string));
    const found = new Map<string, Record<string, unknown>>();
    const readable = new Set<string>();
    for (const [target, ids] of byClass) {
      if (source.schema.has(target) && (!source.mayFind(target, auth) || !source.mayGet(target, auth))) continue;
      readable.add(target);
      if (!source.schema.has(target)) continue;
      const rows = await source.rows(target, {
        where: source.scopeWhere(target, { objectId: { $in: [...ids] } }, auth),
        limit: ids.size,
        principals: auth.master ? undefined : auth.principals,
      });
      for (const row of rows) {
        const object = selectKeys(source.present(target, row, auth), nested.keys, nested.excludeKeys);
        found.set(`${target}:${row.objectId}`, { ...object, __type: 'Object', className: target });
      }
    }
    const shortened = new Set<unknown[]>();
    for (const { parent, key, value } of holders) {
      const full = found.get(`${value.className}:${value.objectId}`);
      if (full) (parent as Record<string | number, unknown>)[key] = full;
      else if (!readable.has(value.className as string)) continue;
      else if (Array.isArray(parent)) {
        parent[key as number] = DROPPED;
        shortened.add(parent);
      } else delete parent[key];
    }
    for (const array of shortened) {
      for (let i = array.length - 1; i >= 0; i--) if (array[i] === DROPPED) array.splice(i, 1);
    }
  }
}

/** Marks an array element to remove once every holder of a path is replaced (indexes stay valid until then). */
const DROPPED = Symbol('dropped');

interface Holder {
  parent: Record<string, unknown> | unknown[];
  key: string | number;
  value: Record<string, unknown>;
}

/** Pointers found at `path` below each object, through included objects and arrays. */
function collect(objects: unknown[], path: readonly string[]): Holder[] {
  let level: Array<{ parent: Record<string, unknown> | unknown[]; key: string | number }> = [];
  for (const o of objects) if (isPlainObject(o)) level.push({ parent: { root: o }, key: 'root' });
  for (const part of path) {
    const next: typeof level = [];
    for (const { parent, key } of level) {
      const holder = (parent as Record<string | number, unknown>)[key];
      if (!isPlainObject(holder)) continue;
      const value = holder[part];
      if (Array.isArray(value)) value.forEach((_, i) => next.push({ parent: value, key: i }));
      else if (value !== undefined) next.push({ parent: holder, key: part });
    }
    level = next;
  }
  return level.flatMap(({ parent, key }) => {
    const value = (parent as Record<string | number, unknown>)[key];
    return isPlainObject(value) && value.__type === 'Pointer' && typeof value.className === 'string' ? [{ parent, key, value }] : [];
  });
}

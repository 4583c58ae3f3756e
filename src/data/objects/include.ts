import type { Auth } from '../auth/context.js';
import type { DataEngine } from '../engine.js';
import { isPlainObject } from '../values.js';

/**
 * Replaces pointers on the `include` paths (`"project"`, `"project.owner"`, `"*"` for every pointer
 * field) with the objects they point to, as Parse does: `{__type: "Object", className, ...fields}`.
 * Objects the caller may not `get` stay pointers: those whose ACL keeps them from the caller, and
 * every object of a class whose CLP `get` does or that clients may not query at all (`_Installation`,
 * the master-only classes, `_Session` without a user: DataEngine.mayFind), and other users' sessions
 * (DataEngine.scopeWhere). Parse Server runs an include as a query of the caller's own and refuses
 * the whole request there; Backyard leaves the pointer (docs/parse-differences.md).
 * This holds at every depth, since a deeper path only follows objects resolved at the one above.
 * One query per class and path depth.
 */
export function includePointers(engine: DataEngine, objects: Record<string, unknown>[], className: string, include: readonly string[], auth: Auth): void {
  const paths = new Set<string>();
  for (const path of include) {
    if (path === '*') {
      for (const [field, type] of Object.entries(engine.schema.fields(className) ?? {})) if (type.type === 'Pointer') paths.add(field);
      continue;
    }
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) paths.add(parts.slice(0, i).join('.'));
  }
  const ordered = [...paths].sort((a, b) => a.split('.').length - b.split('.').length);
  for (const path of ordered) {
    const holders = collect(objects, path.split('.'));
    const byClass = new Map<string, Set<string>>();
    for (const { value } of holders) byClass.set(value.className as string, (byClass.get(value.className as string) ?? new Set()).add(value.objectId as string));
    const found = new Map<string, Record<string, unknown>>();
    for (const [target, ids] of byClass) {
      if (!engine.schema.has(target) || !engine.mayFind(target, auth) || !engine.allows(target, 'get', auth)) continue;
      const rows = engine.storage.find(target, {
        where: engine.scopeWhere(target, { objectId: { $in: [...ids] } }, auth),
        limit: ids.size,
        principals: auth.master ? undefined : auth.principals,
      });
      for (const row of rows) {
        const object = engine.protect(target, engine.toJson(target, row), auth);
        found.set(`${target}:${row.objectId}`, { ...object, __type: 'Object', className: target });
      }
    }
    for (const { parent, key, value } of holders) {
      const full = found.get(`${value.className}:${value.objectId}`);
      if (full) parent[key as keyof typeof parent] = full as never;
    }
  }
}

interface Holder {
  parent: Record<string, unknown> | unknown[];
  key: string | number;
  value: Record<string, unknown>;
}

/** Pointers found at `path` below each object, through included objects and arrays. */
function collect(objects: unknown[], path: string[]): Holder[] {
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
    return isPlainObject(value) && value.__type === 'Pointer' ? [{ parent, key, value }] : [];
  });
}

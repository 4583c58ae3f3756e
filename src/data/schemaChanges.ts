import { ParseCode, ParseError } from './errors.js';
import { fieldPath } from './fieldPath.js';
import { parseClassLevelPermissions } from './classPermissions.js';
import type { DataStore, SchemaTransaction } from './store.js';
import { checkClassName, checkOneGeoPoint, isBuiltInField, type Schema, type SchemaResponse } from './schema.js';
import { parseFieldDefinitions } from './schemaFields.js';
import type { StoredClass } from './storage/adapter.js';
import { DEFAULT_FIELDS, FIELD_NAME, type FieldType } from './types.js';
import { describeType, isPlainObject } from './values.js';

/*
 * Schema changes as `/schemas` makes them (Parse REST guide, "Schema"), each in one transaction of
 * the engine (DataEngine.changeSchema). Codes as Parse Server 9 answers them: 103 for a bad, existing
 * or missing class; 136 for a built-in field; 255 for a field that exists or does not; 105, 107, 111
 * and 135 for field definitions (schemaFields.ts) and 107 for class-level permissions
 * (classPermissions.ts).
 */

const invalid = (message: string) => new ParseError(ParseCode.INVALID_JSON, message);

/** Applies a `/schemas` body's `indexes` (`{name: {field: 1}}` or `{name: {"__op": "Delete"}}`). */
async function applyIndexes(tx: SchemaTransaction, cls: StoredClass, raw: unknown): Promise<void> {
  if (raw === undefined) return;
  if (!isPlainObject(raw)) throw invalid('indexes must be an object of {name: {field: 1}}.');
  const fields = { ...DEFAULT_FIELDS, ...cls.fields };
  for (const [name, spec] of Object.entries(raw)) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name) || name === '_id_') throw invalid(`Index name "${name}" is not allowed.`);
    if (isPlainObject(spec) && spec.__op === 'Delete') {
      if (!cls.indexes[name]) throw invalid(`Index "${name}" does not exist.`);
      await tx.dropIndex(cls.className, name);
      delete cls.indexes[name];
      continue;
    }
    if (cls.indexes[name]) throw invalid(`Index "${name}" already exists.`);
    if (!isPlainObject(spec) || Object.keys(spec).length === 0) throw invalid(`Index "${name}" needs fields, e.g. {"score": 1}.`);
    const keys: Record<string, 1 | -1> = {};
    for (const [field, dir] of Object.entries(spec)) {
      // Every part of a dotted key, not only the field it starts with, is written into the index's SQL.
      const path = fieldPath(field.split('.'), () =>
        invalid(`Index "${name}": ${JSON.stringify(field)} is not a field path (field names of letters, digits and _, and array indexes, joined by ".").`),
      );
      if (!FIELD_NAME.test(path[0]!) && !Object.hasOwn(DEFAULT_FIELDS, path[0]!)) throw invalid(`Field ${field} does not exist, cannot create index ${name}.`);
      const top = Object.hasOwn(fields, path[0]!) ? fields[path[0]!] : undefined;
      if (!top) throw invalid(`Field ${field} does not exist, cannot create index ${name}.`);
      if (top.type === 'Relation') throw invalid(`Field ${field} is a Relation and cannot be indexed.`);
      if (dir !== 1 && dir !== -1) throw invalid(`Index "${name}": direction of ${field} must be 1 or -1.`);
      keys[field] = dir;
    }
    await tx.createIndex(cls.className, name, keys);
    cls.indexes[name] = keys;
  }
}

/**
 * Classes that exist from an app's start: Parse Server creates `_User` and `_Role` when it starts
 * (DatabaseController.performInitialization), so `/schemas` reads and changes them before any
 * user or role is saved; Backyard stores them once something is written.
 */
const PRESENT_FROM_START = new Set(['_User', '_Role']);

/** The class's entry, or the blank one of a class that exists from the start (PRESENT_FROM_START); undefined otherwise. */
export function classOrImplicit(schema: Schema, className: string): StoredClass | undefined {
  return schema.editable(className) ?? (PRESENT_FROM_START.has(className) ? schema.blank(className) : undefined);
}

/** A body's `className`, when given, must name the class of the path (Parse: 103). */
export function checkBodyClassName(body: Record<string, unknown>, className: string): void {
  if (body.className !== undefined && body.className !== null && body.className !== '' && body.className !== className) {
    throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class name mismatch between ${String(body.className)} and ${className}.`);
  }
}

/**
 * Applies a PUT's field definitions to `cls`, as Parse Server's `updateClass` does: a Delete removes
 * the field from every object (and its indexes); a new name adds the field; an existing field of the
 * same type takes the new `required` and `defaultValue`.
 * @throws ParseError 136 for deleting a field every object has or a system field; 255 for deleting a
 *   missing field or giving an existing one another type; 111 for another target class.
 */
async function applyFieldChanges(tx: SchemaTransaction, cls: StoredClass, changes: Record<string, FieldType | 'Delete'>): Promise<void> {
  const { className } = cls;
  for (const [name, def] of Object.entries(changes)) {
    const existing = DEFAULT_FIELDS[name] ?? cls.fields[name];
    if (def === 'Delete') {
      if (isBuiltInField(className, name)) throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, `field ${name} cannot be changed`);
      if (!existing) throw new ParseError(ParseCode.CLASS_NOT_EMPTY, `Field ${name} does not exist, cannot delete.`);
      await tx.removeField(className, name, existing);
      delete cls.fields[name];
      for (const [index, keys] of Object.entries(cls.indexes)) {
        if (Object.keys(keys).some((k) => k.split('.')[0] === name)) {
          await tx.dropIndex(className, index);
          delete cls.indexes[index];
        }
      }
      continue;
    }
    if (existing) {
      if (existing.type !== def.type) throw new ParseError(ParseCode.CLASS_NOT_EMPTY, `Field ${name} exists, cannot update.`);
      if (existing.targetClass !== def.targetClass) {
        throw new ParseError(ParseCode.INCORRECT_TYPE, `schema mismatch for ${className}.${name}; expected ${describeType(existing)} but got ${describeType(def)}`);
      }
      // Built-in fields keep their definition; Parse Server also answers 200 without changing them.
      if (isBuiltInField(className, name)) continue;
    }
    cls.fields[name] = def;
  }
  checkOneGeoPoint(cls.fields);
}

/**
 * Creates a class with a `/schemas` body's fields, CLP and indexes.
 * @throws ParseError 103 when the class exists or its name is bad; see above for the rest.
 */
export function createClass(store: DataStore, className: string, body: Record<string, unknown>): Promise<SchemaResponse> {
  return store.changeSchema(async (tx) => {
    if (store.schema.has(className) || PRESENT_FROM_START.has(className)) throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class ${className} already exists.`);
    checkClassName(className);
    const cls = store.schema.blank(className);
    for (const [name, type] of Object.entries(parseFieldDefinitions(className, body.fields, false))) {
      if (isBuiltInField(className, name)) throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, `field ${name} cannot be added`);
      cls.fields[name] = type as FieldType;
    }
    checkOneGeoPoint(cls.fields);
    cls.classLevelPermissions = parseClassLevelPermissions(body.classLevelPermissions, cls.fields) ?? {};
    await tx.save(cls);
    await applyIndexes(tx, cls, body.indexes);
    await tx.save(cls);
    return store.schema.response(cls);
  });
}

/**
 * Changes a class's fields, CLP and indexes from a `/schemas` PUT body.
 * @throws ParseError 103 when there is no such class; see above for the rest.
 */
export function updateClass(store: DataStore, className: string, body: Record<string, unknown>): Promise<SchemaResponse> {
  return store.changeSchema(async (tx) => {
    const cls = classOrImplicit(store.schema, className);
    if (!cls) throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class ${className} does not exist.`);
    await applyFieldChanges(tx, cls, parseFieldDefinitions(className, body.fields, true));
    const clp = parseClassLevelPermissions(body.classLevelPermissions, cls.fields);
    if (clp !== undefined) cls.classLevelPermissions = clp;
    await tx.save(cls);
    await applyIndexes(tx, cls, body.indexes);
    await tx.save(cls);
    return store.schema.response(cls);
  });
}

/** Drops an empty class (nothing for an unknown one). @throws ParseError 255 when it has objects. */
export function dropClass(store: DataStore, className: string): Promise<void> {
  checkClassName(className);
  return store.changeSchema(async (tx) => {
    if (!store.schema.has(className)) return;
    const n = await tx.count(className);
    if (n > 0) throw new ParseError(ParseCode.CLASS_NOT_EMPTY, `Class ${className} is not empty, contains ${n} objects, cannot drop schema.`);
    await tx.drop(className);
  });
}

import { ParseCode, ParseError } from '../../errors.js';
import { checkClassName, Schema } from '../../schema.js';
import type { ClassLevelPermissions, StoredClass } from '../../storage/adapter.js';
import { DEFAULT_FIELDS } from '../../types.js';
import { isPlainObject } from '../../values.js';
import type { DataEngine } from '../../engine.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

const CLP_ACTIONS = ['find', 'count', 'get', 'create', 'update', 'delete', 'addField'] as const;

const invalid = (message: string) => new ParseError(ParseCode.INVALID_JSON, message);

/** Checks Parse's classLevelPermissions shape: each action maps principals to `true`. */
function parseClp(raw: unknown): ClassLevelPermissions {
  if (raw === undefined) return {};
  if (!isPlainObject(raw)) throw invalid('classLevelPermissions must be an object, e.g. {"find":{"*":true}}.');
  const out: ClassLevelPermissions = {};
  for (const [action, entry] of Object.entries(raw)) {
    if (action === 'protectedFields') {
      if (!isPlainObject(entry) || !Object.values(entry).every((v) => Array.isArray(v) && v.every((f) => typeof f === 'string'))) {
        throw invalid('classLevelPermissions.protectedFields must map principals to arrays of field names.');
      }
      out.protectedFields = entry as Record<string, string[]>;
      continue;
    }
    if (!(CLP_ACTIONS as readonly string[]).includes(action)) throw invalid(`classLevelPermissions: unknown action "${action}"; use ${CLP_ACTIONS.join(', ')}.`);
    if (!isPlainObject(entry) || !Object.values(entry).every((v) => v === true)) {
      throw invalid(`classLevelPermissions.${action} must map principals ("*", a user id, "role:name", "requiresAuthentication") to true.`);
    }
    out[action as (typeof CLP_ACTIONS)[number]] = entry as Record<string, boolean>;
  }
  return out;
}

/** Applies a `/schemas` body's `indexes` (`{name: {field: 1}}` or `{name: {"__op": "Delete"}}`). */
function applyIndexes(engine: DataEngine, cls: StoredClass, raw: unknown): void {
  if (raw === undefined) return;
  if (!isPlainObject(raw)) throw invalid('indexes must be an object of {name: {field: 1}}.');
  const fields = { ...DEFAULT_FIELDS, ...cls.fields };
  for (const [name, spec] of Object.entries(raw)) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name) || name === '_id_') throw invalid(`Index name "${name}" is not allowed.`);
    if (isPlainObject(spec) && spec.__op === 'Delete') {
      if (!cls.indexes[name]) throw invalid(`Index "${name}" does not exist.`);
      engine.storage.dropIndex(cls.className, name);
      delete cls.indexes[name];
      continue;
    }
    if (cls.indexes[name]) throw invalid(`Index "${name}" already exists.`);
    if (!isPlainObject(spec) || Object.keys(spec).length === 0) throw invalid(`Index "${name}" needs fields, e.g. {"score": 1}.`);
    const keys: Record<string, 1 | -1> = {};
    for (const [field, dir] of Object.entries(spec)) {
      const top = fields[field.split('.')[0]!];
      if (!top) throw invalid(`Field ${field} does not exist, cannot create index ${name}.`);
      if (top.type === 'Relation') throw invalid(`Field ${field} is a Relation and cannot be indexed.`);
      if (dir !== 1 && dir !== -1) throw invalid(`Index "${name}": direction of ${field} must be 1 or -1.`);
      keys[field] = dir;
    }
    engine.storage.createIndex(cls.className, name, keys);
    cls.indexes[name] = keys;
  }
}

/**
 * `/schemas` and `/schemas/<ClassName>` (Parse REST guide, "Schema"), master key only: read, create
 * a class with fields, CLP and indexes, change them (a field `{"__op":"Delete"}` removes it from
 * every object), and drop an empty class.
 */
export function schemaRoutes(router: DataRouter): void {
  router.on('GET', '/schemas', (req) => {
    requireMaster(req);
    return ok({ results: req.engine.schema.all().map((c) => req.engine.schema.response(c)) });
  });
  router.on('GET', '/schemas/:className', (req, { className }) => {
    requireMaster(req);
    const cls = req.engine.schema.get(className!);
    if (!cls) throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class ${className} does not exist.`);
    return ok(req.engine.schema.response(cls));
  });
  const create = (req: Parameters<Parameters<DataRouter['on']>[2]>[0], className: string) => {
    requireMaster(req);
    const body = isPlainObject(req.body) ? req.body : {};
    if (body.className !== undefined && body.className !== className) throw invalid(`Class name mismatch between ${String(body.className)} and ${className}.`);
    checkClassName(className);
    const engine = req.engine;
    return engine.storage.transaction(() => {
      if (engine.schema.has(className)) throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class ${className} already exists.`);
      const cls = engine.schema.blank(className);
      for (const [name, type] of Object.entries(Schema.parseFieldDefinitions(body.fields, false))) {
        if (name in DEFAULT_FIELDS) continue;
        cls.fields[name] = type as Exclude<typeof type, 'Delete'>;
      }
      cls.classLevelPermissions = parseClp(body.classLevelPermissions);
      engine.storage.saveClass(cls);
      applyIndexes(engine, cls, body.indexes);
      engine.storage.saveClass(cls);
      return ok(engine.schema.response(cls));
    });
  };
  router.on('POST', '/schemas', (req) => {
    const name = isPlainObject(req.body) ? req.body.className : undefined;
    if (typeof name !== 'string') throw new ParseError(ParseCode.MISSING_OBJECT_ID, 'POST /schemas needs a className.');
    return create(req, name);
  });
  router.on('POST', '/schemas/:className', (req, { className }) => create(req, className!));
  router.on('PUT', '/schemas/:className', (req, { className }) => {
    requireMaster(req);
    const body = isPlainObject(req.body) ? req.body : {};
    const engine = req.engine;
    return engine.storage.transaction(() => {
      const cls = engine.schema.editable(className!);
      if (!cls) throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class ${className} does not exist.`);
      for (const [name, def] of Object.entries(Schema.parseFieldDefinitions(body.fields, true))) {
        if (name in DEFAULT_FIELDS) throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, `Field ${name} cannot be changed.`);
        if (def === 'Delete') {
          // Parse Server answers 255 here too.
          if (!cls.fields[name]) throw new ParseError(ParseCode.CLASS_NOT_EMPTY, `Field ${name} does not exist, cannot delete.`);
          engine.storage.removeField(className!, name, cls.fields[name]!);
          delete cls.fields[name];
          for (const [index, keys] of Object.entries(cls.indexes)) {
            if (Object.keys(keys).some((k) => k.split('.')[0] === name)) {
              engine.storage.dropIndex(className!, index);
              delete cls.indexes[index];
            }
          }
        } else {
          if (cls.fields[name]) throw new ParseError(ParseCode.INCORRECT_TYPE, `Field ${name} exists, cannot update.`);
          cls.fields[name] = def;
        }
      }
      if (body.classLevelPermissions !== undefined) cls.classLevelPermissions = parseClp(body.classLevelPermissions);
      engine.storage.saveClass(cls);
      applyIndexes(engine, cls, body.indexes);
      engine.storage.saveClass(cls);
      return ok(engine.schema.response(cls));
    });
  });
  router.on('DELETE', '/schemas/:className', (req, { className }) => {
    requireMaster(req);
    const engine = req.engine;
    return engine.storage.transaction(() => {
      if (!engine.schema.has(className!)) return ok({});
      const n = engine.storage.count(className!, {});
      if (n > 0) throw new ParseError(ParseCode.CLASS_NOT_EMPTY, `Class ${className} is not empty, contains ${n} objects, cannot drop schema.`);
      engine.storage.dropClass(className!);
      return ok({});
    });
  });
}


import { ParseCode, ParseError } from './errors.js';
import type { ClassLevelPermissions, StorageAdapter, StoredClass } from './storage/adapter.js';
import { CLASS_NAME, DEFAULT_FIELDS, FIELD_NAME, FIELD_TYPES, SYSTEM_CLASSES, type FieldType } from './types.js';
import { describeType, fitsType, isPlainObject } from './values.js';

/** Parse's default class-level permissions: everything open to everyone. */
export const defaultClp = (): ClassLevelPermissions => ({
  find: { '*': true },
  count: { '*': true },
  get: { '*': true },
  create: { '*': true },
  update: { '*': true },
  delete: { '*': true },
  addField: { '*': true },
  protectedFields: { '*': [] },
});

/** The fields each system class has from the start (Parse Server's defaults for them). */
const SYSTEM_FIELDS: Record<string, Record<string, FieldType>> = {
  _User: { username: { type: 'String' }, password: { type: 'String' }, email: { type: 'String' }, emailVerified: { type: 'Boolean' }, authData: { type: 'Object' } },
  _Role: { name: { type: 'String' }, users: { type: 'Relation', targetClass: '_User' }, roles: { type: 'Relation', targetClass: '_Role' } },
  _Session: {
    user: { type: 'Pointer', targetClass: '_User' },
    installationId: { type: 'String' },
    sessionToken: { type: 'String' },
    expiresAt: { type: 'Date' },
    createdWith: { type: 'Object' },
  },
  _Installation: {
    installationId: { type: 'String' },
    deviceToken: { type: 'String' },
    channels: { type: 'Array' },
    deviceType: { type: 'String' },
    pushType: { type: 'String' },
    GCMSenderId: { type: 'String' },
    timeZone: { type: 'String' },
    localeIdentifier: { type: 'String' },
    badge: { type: 'Number' },
    appVersion: { type: 'String' },
    appName: { type: 'String' },
    appIdentifier: { type: 'String' },
    parseVersion: { type: 'String' },
  },
  _JobStatus: {
    jobName: { type: 'String' },
    source: { type: 'String' },
    status: { type: 'String' },
    message: { type: 'String' },
    params: { type: 'Object' },
    finishedAt: { type: 'Date' },
  },
  _Audience: { name: { type: 'String' }, query: { type: 'String' }, lastUsed: { type: 'Date' }, timesUsed: { type: 'Number' } },
};

/**
 * The classes of Parse Server's `classesWithMasterOnlyAccess` that Backyard has: only the master key
 * reads or writes them (advisory GHSA-7xg7-rqf6-pw6c closed the generic class routes to clients).
 */
export const MASTER_ONLY_CLASSES: ReadonlySet<string> = new Set(['_JobStatus', '_Audience']);

/**
 * Checks a class name: Parse's rule (code 103), or one of the known system classes.
 * @throws ParseError 103.
 */
export function checkClassName(className: string): void {
  if (CLASS_NAME.test(className) || (SYSTEM_CLASSES as readonly string[]).includes(className)) return;
  throw new ParseError(
    ParseCode.INVALID_CLASS_NAME,
    `Invalid classname: ${className}, classnames can only have alphanumeric characters and _, and must start with an alpha character.`,
  );
}

/** @throws ParseError 105 for a field name outside Parse's rule. */
export function checkFieldName(field: string): void {
  if (!FIELD_NAME.test(field)) throw new ParseError(ParseCode.INVALID_KEY_NAME, `Invalid field name: ${field}.`);
}

/** The schema of a class as `/schemas` answers it (Parse REST guide, "Schema"). */
export interface SchemaResponse {
  className: string;
  fields: Record<string, FieldType>;
  classLevelPermissions: ClassLevelPermissions;
  indexes: Record<string, Record<string, number>>;
}

/**
 * The schema of one Backend App: classes, their fields (taught by the first write of each key),
 * class-level permissions and indexes, kept in the storage adapter.
 */
export class Schema {
  constructor(private readonly storage: StorageAdapter) {}

  /** The class's schema entry, read-only. */
  get(className: string): Readonly<StoredClass> | undefined {
    return this.storage.getClass(className);
  }

  /** A copy of the class's entry to change and save. */
  editable(className: string): StoredClass | undefined {
    const cls = this.storage.getClass(className);
    return cls && structuredClone(cls);
  }

  has(className: string): boolean {
    return this.storage.fields(className) !== undefined;
  }

  /** Every field with its type, the default ones included; undefined for an unknown class. */
  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    return this.storage.fields(className);
  }

  all(): Readonly<StoredClass>[] {
    return this.storage.loadSchema();
  }

  /** The `/schemas` form of a class. */
  response(cls: Readonly<StoredClass>): SchemaResponse {
    return {
      className: cls.className,
      fields: { ...DEFAULT_FIELDS, ...cls.fields },
      classLevelPermissions: { ...defaultClp(), ...cls.classLevelPermissions },
      indexes: { _id_: { _id: 1 }, ...cls.indexes },
    };
  }

  /** A new class entry with the system fields a system class has. */
  blank(className: string): StoredClass {
    return { className, fields: { ...(SYSTEM_FIELDS[className] ?? {}) }, classLevelPermissions: {}, indexes: {} };
  }

  /**
   * Makes sure the class exists and knows `types`, adding what is new (issue 3: the first write of a
   * key teaches the schema). Call inside the write's transaction.
   * @param mayAddField false when CLP forbids adding fields for this caller.
   * @throws ParseError 111 when a field already has another type; 119 when a field may not be added.
   */
  learn(className: string, types: Record<string, FieldType>, mayAddField: boolean): void {
    const known = this.fields(className);
    if (known && Object.entries(types).every(([f, t]) => known[f] && fitsType(known[f]!, t))) return;
    const cls = this.editable(className) ?? this.blank(className);
    let changed = !this.has(className);
    for (const [field, type] of Object.entries(types)) {
      if (field in DEFAULT_FIELDS) continue;
      const known = cls.fields[field];
      if (known) {
        if (!fitsType(known, type)) {
          throw new ParseError(ParseCode.INCORRECT_TYPE, `schema mismatch for ${className}.${field}; expected ${describeType(known)} but got ${describeType(type)}`);
        }
        continue;
      }
      if (!mayAddField) {
        throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `Permission denied for action addField on class ${className}.`);
      }
      cls.fields[field] = type;
      changed = true;
    }
    if (changed) this.storage.saveClass(cls);
  }

  /**
   * Reads a `fields` object of a `/schemas` POST or PUT: `{name: {type, targetClass?}}`, or
   * `{"__op": "Delete"}` when `allowDelete`.
   * @throws ParseError 105 for a bad name, 111 (invalid type) or 135-style 111 for a bad target class.
   */
  static parseFieldDefinitions(fields: unknown, allowDelete: boolean): Record<string, FieldType | 'Delete'> {
    if (fields === undefined) return {};
    if (!isPlainObject(fields)) throw new ParseError(ParseCode.INVALID_JSON, 'fields must be an object of field definitions.');
    const out: Record<string, FieldType | 'Delete'> = {};
    for (const [name, def] of Object.entries(fields)) {
      checkFieldName(name);
      if (!isPlainObject(def)) throw new ParseError(ParseCode.INCORRECT_TYPE, `Field ${name} needs a definition like {"type":"String"}.`);
      if (def.__op === 'Delete') {
        if (!allowDelete) throw new ParseError(ParseCode.INVALID_JSON, `Field ${name} cannot be deleted while the class is created.`);
        out[name] = 'Delete';
        continue;
      }
      if (typeof def.type !== 'string' || !(FIELD_TYPES as readonly string[]).includes(def.type) || def.type === 'ACL') {
        throw new ParseError(ParseCode.INCORRECT_TYPE, `invalid field type: ${String(def.type)} for field ${name}; use one of ${FIELD_TYPES.filter((t) => t !== 'ACL').join(', ')}.`);
      }
      const type: FieldType = { type: def.type as FieldType['type'] };
      if (type.type === 'Pointer' || type.type === 'Relation') {
        if (typeof def.targetClass !== 'string') throw new ParseError(ParseCode.INCORRECT_TYPE, `type ${type.type} needs a class name (targetClass) for field ${name}.`);
        checkClassName(def.targetClass);
        type.targetClass = def.targetClass;
      }
      if (def.required === true) type.required = true;
      if (def.defaultValue !== undefined) type.defaultValue = def.defaultValue;
      out[name] = type;
    }
    return out;
  }
}

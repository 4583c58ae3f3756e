import { ParseCode, ParseError } from './errors.js';
import type { ClassLevelPermissions, StorageAdapter, StorageTransaction, StoredClass } from './storage/adapter.js';
import { CLASS_NAME, DEFAULT_FIELDS, FIELD_NAME, SYSTEM_CLASSES, type FieldType } from './types.js';
import { describeType, fitsType } from './values.js';

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
  _JobSchedule: {
    jobName: { type: 'String' },
    description: { type: 'String' },
    params: { type: 'String' },
    startAfter: { type: 'String' },
    daysOfWeek: { type: 'Array' },
    timeOfDay: { type: 'String' },
    lastRun: { type: 'Number' },
    repeatMinutes: { type: 'Number' },
  },
  _PushStatus: {
    pushTime: { type: 'String' },
    source: { type: 'String' },
    query: { type: 'String' },
    payload: { type: 'String' },
    title: { type: 'String' },
    expiry: { type: 'Number' },
    expiration_interval: { type: 'Number' },
    status: { type: 'String' },
    numSent: { type: 'Number' },
    numFailed: { type: 'Number' },
    pushHash: { type: 'String' },
    errorMessage: { type: 'Object' },
    sentPerType: { type: 'Object' },
    failedPerType: { type: 'Object' },
    count: { type: 'Number' },
  },
  _Audience: { name: { type: 'String' }, query: { type: 'String' }, lastUsed: { type: 'Date' }, timesUsed: { type: 'Number' } },
};

/**
 * The classes of Parse Server's `classesWithMasterOnlyAccess` that Backyard has: only the master key
 * reads or writes them (advisory GHSA-7xg7-rqf6-pw6c closed the generic class routes to clients).
 */
export const MASTER_ONLY_CLASSES: ReadonlySet<string> = new Set(['_JobStatus', '_JobSchedule', '_PushStatus', '_Audience']);

/**
 * Checks a class name: Parse's rule (code 103), or one of the known system classes.
 * @throws ParseError 103.
 */
export function checkClassName(className: string): void {
  if (CLASS_NAME.test(className) || (SYSTEM_CLASSES as readonly string[]).includes(className)) return;
  throw new ParseError(
    ParseCode.INVALID_CLASS_NAME,
    // Parse Server's text to the letter, its trailing space included (SchemaController.invalidClassNameMessage).
    `Invalid classname: ${className}, classnames can only have alphanumeric characters and _, and must start with an alpha character `,
  );
}

/**
 * Field names Parse Server refuses although they pass the pattern (its SchemaController's
 * `fieldNameIsValid`): `className`, which the SDK reads as the object's class, and `length`.
 */
const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['className', 'length']);

/** Whether `field` is a valid top-level field name (Parse's `fieldNameIsValid`). */
export const isValidFieldName = (field: string): boolean => FIELD_NAME.test(field) && !RESERVED_FIELD_NAMES.has(field);

/** @throws ParseError 105 for a field name outside Parse's rule (pattern, `className`, `length`). */
export function checkFieldName(field: string): void {
  if (!isValidFieldName(field)) throw new ParseError(ParseCode.INVALID_KEY_NAME, `Invalid field name: ${field}.`);
}

/**
 * Checks a key of an object write: a field name, or a dotted path `objectField.sub.key` that updates
 * inside an Object field (Parse's dot notation). Each part of a path follows the field-name pattern,
 * as in queries (query/sql.ts, keyPath), so that what is written can be queried; the top field may
 * not be one every object has nor a system field of the class (`authData`, `createdWith`, ...), whose
 * writes the users and sessions services check by name.
 * @throws ParseError 105 "Invalid field name: <key>."
 */
export function checkWriteKey(className: string, key: string): void {
  if (!key.includes('.')) return checkFieldName(key);
  const [top, ...rest] = key.split('.');
  const valid = isValidFieldName(top!) && !(top! in DEFAULT_FIELDS) && !(top! in (SYSTEM_FIELDS[className] ?? {})) && rest.every((part) => FIELD_NAME.test(part));
  if (!valid) throw new ParseError(ParseCode.INVALID_KEY_NAME, `Invalid field name: ${key}.`);
}

/** Whether `field` is one every object has (objectId, createdAt, updatedAt, ACL) or a system field of `className`. */
export const isBuiltInField = (className: string, field: string): boolean => field in DEFAULT_FIELDS || field in (SYSTEM_FIELDS[className] ?? {});

/**
 * Parse Server allows one GeoPoint field per class (its SchemaController, for `$near` on MongoDB).
 * @param byObject an object's write brought the second one: Parse Server's text for objects.
 * @throws ParseError 111 naming the two fields when `fields` holds more than one (`/schemas`), or
 *   "there can only be one geopoint field in a class" (`byObject`), Parse Server's texts.
 */
export function checkOneGeoPoint(fields: Readonly<Record<string, FieldType>>, byObject = false): void {
  const geoPoints = Object.keys(fields).filter((f) => fields[f]!.type === 'GeoPoint');
  if (geoPoints.length > 1) {
    if (byObject) throw new ParseError(ParseCode.INCORRECT_TYPE, 'there can only be one geopoint field in a class');
    throw new ParseError(ParseCode.INCORRECT_TYPE, `currently, only one GeoPoint field may exist in an object. Adding ${geoPoints[1]} when ${geoPoints[0]} already exists.`);
  }
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

  /** Changes whenever the app's schema does: caches built from the schema (the GraphQL schema) key on it. */
  generation(): number {
    return this.storage.schemaGeneration();
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
   * Makes sure the class exists and knows `types`, adding what is new (the first write of a
   * key teaches the schema), in the write's transaction `tx`. Resolves once saved; undefined when
   * there was nothing to save.
   * @param mayAddField false when CLP forbids adding fields for this caller.
   * @throws ParseError 111 when a field already has another type or would be a second GeoPoint field;
   *   119 when a field may not be added.
   */
  learn(tx: StorageTransaction, className: string, types: Record<string, FieldType>, mayAddField: boolean): Promise<void> | undefined {
    const known = this.fields(className);
    // Nothing new (most writes): answered at once, without a promise.
    if (known && Object.entries(types).every(([f, t]) => known[f] && fitsType(known[f]!, t))) return undefined;
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
      if (type.type === 'GeoPoint') checkOneGeoPoint(cls.fields, true);
    }
    return changed ? tx.saveClass(cls) : undefined;
  }
}

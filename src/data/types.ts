/** The field types of Parse's schema (`/schemas` answers them under these names). */
export const FIELD_TYPES = [
  'String',
  'Number',
  'Boolean',
  'Date',
  'Object',
  'Array',
  'Pointer',
  'Relation',
  'File',
  'GeoPoint',
  'Polygon',
  'Bytes',
  'ACL',
] as const;

export type FieldTypeName = (typeof FIELD_TYPES)[number];

/** A field of a class schema, as `/schemas` shows it: `{type}` plus `targetClass` for Pointer and Relation. */
export interface FieldType {
  type: FieldTypeName;
  targetClass?: string;
  required?: boolean;
  defaultValue?: unknown;
}

/** Parse's rule for class names (code 103) and field names (code 105). System classes start with `_`. */
export const CLASS_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
export const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** The system classes Backyard knows, allowed despite their leading underscore. */
export const SYSTEM_CLASSES = ['_User', '_Role', '_Session', '_Installation', '_JobStatus', '_JobSchedule', '_PushStatus', '_Audience'] as const;

/** Whether `name` is a class name by Parse's rule, or one of the system classes. */
export const isClassName = (name: unknown): name is string =>
  typeof name === 'string' && (CLASS_NAME.test(name) || (SYSTEM_CLASSES as readonly string[]).includes(name));

/** Fields every object has, kept in columns rather than in the JSON data (spec, Interface B, "Object"). */
export const DEFAULT_FIELDS: Record<string, FieldType> = {
  objectId: { type: 'String' },
  createdAt: { type: 'Date' },
  updatedAt: { type: 'Date' },
  ACL: { type: 'ACL' },
};

/** Where a query can learn each class's fields; `undefined` for a class that does not exist. */
export interface SchemaLookup {
  fields(className: string): Readonly<Record<string, FieldType>> | undefined;
}

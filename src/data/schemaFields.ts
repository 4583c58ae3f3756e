import { ParseCode, ParseError } from './errors.js';
import { checkClassName, isValidFieldName } from './schema.js';
import { FIELD_TYPES, type FieldType } from './types.js';
import { describeType, encodeValue, fitsType, isPlainObject } from './values.js';

/**
 * The `fields` of a `/schemas` POST or PUT body: `{name: {type, targetClass?, required?, defaultValue?}}`,
 * or `{"__op": "Delete"}` in a PUT. Codes and rules are Parse Server 9's (SchemaController's
 * `validateSchemaData` and `fieldTypeIsInvalid`); values are checked as an object write checks them.
 */

const invalidJson = (message: string) => new ParseError(ParseCode.INVALID_JSON, message);
const incorrectType = (message: string) => new ParseError(ParseCode.INCORRECT_TYPE, message);

/**
 * One field definition, checked.
 * @throws ParseError 107 for a definition that is not `{type: "<name>", ...}` or a non-string
 *   targetClass; 135 for a Pointer or Relation without targetClass; 103 for a bad targetClass; 111 for
 *   an unknown type, a `required` that is not a boolean, a `defaultValue` of another type (or null),
 *   and `required` or `defaultValue` on a Relation.
 */
export function parseFieldDefinition(className: string, name: string, def: unknown): FieldType {
  if (!isPlainObject(def)) throw invalidJson(`Field ${name} needs a definition like {"type": "String"}.`);
  const { type, targetClass, required, defaultValue } = def;
  if (type === 'Pointer' || type === 'Relation') {
    if (targetClass === undefined || targetClass === null || targetClass === '') {
      throw new ParseError(ParseCode.MISSING_REQUIRED_FIELD, `type ${type} needs a class name (targetClass) for field ${name}.`);
    }
    if (typeof targetClass !== 'string') throw invalidJson(`targetClass of field ${name} must be a class name string.`);
    checkClassName(targetClass);
  } else if (typeof type !== 'string') {
    throw invalidJson(`Field ${name} needs a type string, e.g. {"type": "String"}.`);
  } else if (!(FIELD_TYPES as readonly string[]).includes(type) || type === 'ACL') {
    throw incorrectType(`invalid field type: ${type} for field ${name}; use one of ${FIELD_TYPES.filter((t) => t !== 'ACL').join(', ')}.`);
  }
  const field: FieldType = { type: type as FieldType['type'] };
  if (type === 'Pointer' || type === 'Relation') field.targetClass = targetClass as string;
  if (defaultValue !== undefined) {
    if (field.type === 'Relation') throw incorrectType(`The 'default value' option is not applicable for ${describeType(field)} (field ${name}).`);
    field.defaultValue = checkDefault(className, name, field, defaultValue);
  }
  if (required !== undefined) {
    if (typeof required !== 'boolean') throw incorrectType(`The 'required' option of field ${name} must be true or false.`);
    if (required && field.type === 'Relation') throw incorrectType(`The 'required' option is not applicable for ${describeType(field)} (field ${name}).`);
    if (required) field.required = true;
  }
  return field;
}

/** A default value checked to have the field's type, in its stored form (a Date's iso normalised). */
function checkDefault(className: string, name: string, field: FieldType, value: unknown): unknown {
  const mismatch = (got: string) => incorrectType(`schema mismatch for ${className}.${name} default value; expected ${describeType(field)} but got ${got}`);
  if (value === null) throw mismatch('null');
  const { type, stored } = encodeValue(name, value);
  if (!fitsType(field, type)) throw mismatch(describeType(type));
  return stored;
}

/**
 * Reads a `fields` object of a `/schemas` POST or PUT (`{"__op": "Delete"}` only when `allowDelete`).
 * Names are checked here; whether a name may be added or changed depends on the class (routes/schemas.ts).
 * @throws ParseError 107 when `fields` is not an object; 105 for a bad name; as parseFieldDefinition.
 */
export function parseFieldDefinitions(className: string, fields: unknown, allowDelete: boolean): Record<string, FieldType | 'Delete'> {
  if (fields === undefined || fields === null) return {};
  if (!isPlainObject(fields)) throw invalidJson('fields must be an object of field definitions, e.g. {"score": {"type": "Number"}}.');
  const out: Record<string, FieldType | 'Delete'> = {};
  for (const [name, def] of Object.entries(fields)) {
    if (!isValidFieldName(name)) throw new ParseError(ParseCode.INVALID_KEY_NAME, `invalid field name: ${name}`);
    if (isPlainObject(def) && def.__op === 'Delete') {
      if (!allowDelete) throw invalidJson(`Field ${name} cannot be deleted while the class is created.`);
      out[name] = 'Delete';
      continue;
    }
    out[name] = parseFieldDefinition(className, name, def);
  }
  return out;
}

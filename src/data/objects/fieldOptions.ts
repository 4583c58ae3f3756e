import { ParseCode, ParseError } from '../errors.js';
import type { FieldType } from '../types.js';
import type { AppliedChanges } from './operations.js';

/** A value Parse Server counts as absent for a required field: missing (or deleted), null or ''. */
const isBlank = (value: unknown) => value === undefined || value === null || value === '';

const required = (field: string) => new ParseError(ParseCode.VALIDATION_ERROR, `${field} is required`);

/**
 * Honours the schema's field options (`/schemas` `required` and `defaultValue`) on a write, as Parse
 * Server's RestWrite (`setRequiredFieldsIfNeeded`) does:
 * - create: a field left out (or deleted with `{"__op": "Delete"}`) takes its default value, which the
 *   create answers back like a computed value; a required field still missing, null or '' is refused;
 * - update: a required field the body sets to null or '' or deletes is refused.
 * Dotted keys (`objectField.sub`) are not checked, as in Parse Server.
 * @param fields the class's fields (schema.fields); `applied` is changed in place (data and computed).
 * @throws ParseError 142 "<field> is required".
 */
export function applyFieldOptions(
  fields: Readonly<Record<string, FieldType>> | undefined,
  body: Readonly<Record<string, unknown>>,
  applied: AppliedChanges,
  creating: boolean,
): void {
  if (!fields) return;
  if (!creating) {
    for (const key of Object.keys(body)) if (fields[key]?.required && isBlank(applied.data[key])) throw required(key);
    return;
  }
  for (const [name, def] of Object.entries(fields)) {
    if (def.defaultValue === undefined && !def.required) continue;
    const value = applied.data[name];
    if (value === undefined && def.defaultValue !== undefined) {
      applied.data[name] = structuredClone(def.defaultValue);
      applied.computed[name] = structuredClone(def.defaultValue);
    } else if (def.required && isBlank(value)) throw required(name);
  }
}

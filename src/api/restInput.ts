import { z } from 'zod';
import { invalid } from '../errors.js';
import { bodyFields, pathParams, type AnyOperation } from '../../tools/operation.js';
import { describeValue } from '../../tools/validation.js';

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | undefined;

/** JSON types of an operation's query fields, to turn query strings into the values the schema wants. */
export function queryFieldTypes(op: AnyOperation): Record<string, JsonType> {
  const schema = z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { type?: JsonType }>;
  };
  const types: Record<string, JsonType> = {};
  for (const field of Object.values(op.query ?? {})) types[field] = schema.properties?.[field]?.type;
  return types;
}

/**
 * Query strings as the schema's types: "true"/"false" for booleans, decimal numbers for numbers.
 * Anything else stays a string so that validation names the field and the wrong value.
 */
function coerce(value: unknown, type: JsonType): unknown {
  if (typeof value !== 'string') return value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  if ((type === 'number' || type === 'integer') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

/**
 * Gathers the flat input of an operation from a REST request: the body's fields, the query
 * parameters under their input names (`app-name` → `appName`) and the path parameters.
 * Unknown query parameters are passed through under their own names, so that validation refuses
 * them as unknown fields.
 * @throws ManagementError(invalid) for a body that is not a JSON object or that repeats a path or
 *   query parameter.
 */
export function restInput(
  op: AnyOperation,
  params: Record<string, string>,
  query: Record<string, unknown>,
  body: unknown,
  types: Record<string, JsonType>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const inBody = new Set(bodyFields(op));
  if (body !== undefined && body !== null) {
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw invalid(`The request body must be a JSON object, not ${describeValue(body)}.`);
    }
    for (const [key, value] of Object.entries(body)) {
      if (!inBody.has(key) && key in op.input.shape) {
        throw invalid(`${key} belongs in the ${pathParams(op).includes(key) ? 'path' : 'query string'}, not in the body.`);
      }
      input[key] = value;
    }
  }
  for (const [name, value] of Object.entries(query)) {
    const field = op.query?.[name] ?? name;
    input[field] = coerce(value, types[field]);
  }
  for (const name of pathParams(op)) input[name] = params[name];
  return input;
}

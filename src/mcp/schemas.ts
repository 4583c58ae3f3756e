/** JSON Schema types, for a value that may be any JSON. */
const ANY_JSON = ['object', 'array', 'string', 'number', 'boolean', 'null'];

/** Keywords that constrain a schema without `type`; a schema with none of them accepts any value. */
const TYPED_BY = ['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref', 'not'];

/**
 * A JSON Schema as tools/list advertises it: the same constraints in
 * fewer characters, and portable. Drops `$schema` (MCP defaults to 2020-12), `propertyNames` that
 * only say keys are strings, the safe-integer bounds zod adds to every integer, and
 * `additionalProperties: false` (an unknown field is still refused, by name, when the call is
 * validated: tools/validation.ts); and gives every
 * property a `type` (an untyped one, zod's `unknown`, takes the list of all JSON types), since some
 * clients refuse or warn about a property without one (the MCP Inspector did on callBackendAPI.body).
 */
export function compactSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return walk(schema, true) as Record<string, unknown>;
}

function walk(value: unknown, top = false): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    if (top && key === '$schema') continue;
    if (key === 'propertyNames' && isStringOnly(child)) continue;
    if (key === 'additionalProperties' && child === false) continue;
    if ((key === 'minimum' && child === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && child === Number.MAX_SAFE_INTEGER)) continue;
    if (key === 'properties' && child && typeof child === 'object') {
      out.properties = Object.fromEntries(Object.entries(child as Record<string, unknown>).map(([name, property]) => [name, typed(walk(property) as Record<string, unknown>)]));
      continue;
    }
    out[key] = walk(child);
  }
  return out;
}

const isStringOnly = (schema: unknown) => !!schema && typeof schema === 'object' && Object.keys(schema).length === 1 && (schema as { type?: unknown }).type === 'string';

function typed(schema: Record<string, unknown>): Record<string, unknown> {
  return TYPED_BY.some((k) => k in schema) ? schema : { type: ANY_JSON, ...schema };
}

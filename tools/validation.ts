import type { z } from 'zod';
import { invalid } from '../src/errors.js';

/**
 * Validates `raw` against an operation's input schema, the one check both front ends share, so a
 * REST 400 and an MCP `isError` carry the same text.
 * @throws ManagementError(invalid) whose message names each offending field and what was wrong.
 */
export function parseInput<S extends z.ZodObject>(schema: S, raw: unknown): z.output<S> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalid(`The arguments must be a JSON object of named fields, not ${describeValue(raw)}.`);
  }
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const accepted = Object.keys(schema.shape);
  const sentences = result.error.issues.map((issue) => describeIssue(issue, raw as Record<string, unknown>, accepted));
  throw invalid([...new Set(sentences)].join(' '));
}

/** A field's path as the data API's own messages write it: `requests[0].url` (one way everywhere). */
const fieldName = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)), '');

function describeIssue(issue: z.core.$ZodIssue, raw: Record<string, unknown>, accepted: string[]): string {
  const field = fieldName(issue.path) || 'the input';
  const value = valueAt(raw, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const list = issue.keys.map((k) => `"${k}"`).join(', ');
      const where = issue.path.length ? ` in ${field}` : '';
      const known = issue.path.length ? '' : ` Accepted fields: ${accepted.join(', ') || 'none'}.`;
      return `Unknown field${issue.keys.length > 1 ? 's' : ''} ${list}${where}.${known}`;
    }
    case 'invalid_type':
      if (value === undefined) return `${field} is required.`;
      return `${field} must be ${article(issue.expected)}, not ${describeValue(value)}.`;
    case 'too_small':
      if (issue.origin === 'string') {
        return Number(issue.minimum) <= 1
          ? `${field} must not be empty.`
          : `${field} must be at least ${issue.minimum} characters long.`;
      }
      if (issue.origin === 'array') return `${field} must have at least ${issue.minimum} element(s).`;
      return `${field} must be at least ${issue.minimum}.`;
    case 'too_big':
      if (issue.origin === 'string') {
        return `${field} must be at most ${issue.maximum} characters long (it has ${String(value).length}).`;
      }
      if (issue.origin === 'array') return `${field} must have at most ${issue.maximum} element(s).`;
      return `${field} must be at most ${issue.maximum}.`;
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, not ${describeValue(value)}.`;
    case 'invalid_format':
      // A pattern's own message says what is expected (e.g. "must be letters, digits and underscores").
      if (issue.format === 'regex') return `${field} ${issue.message.startsWith('Invalid') ? 'does not have the expected form' : issue.message}, not ${describeValue(value)}.`;
      return `${field} is not a valid ${issue.format}.`;
    default:
      return `${field}: ${issue.message}.`;
  }
}

function valueAt(raw: unknown, path: PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

const article = (type: string) => {
  const name = type === 'int' ? 'integer' : type;
  return (/^[aeiou]/.test(name) ? 'an ' : 'a ') + name;
};

/** "a string", "the number 3", "null", "an array": for error texts. */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  if (typeof v === 'number' || typeof v === 'boolean') return `the ${typeof v} ${String(v)}`;
  return article(typeof v);
}


import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';
import { MAX_NESTING, nestsDeeperThan } from '../nesting.js';

/** A query's options after checking (Parse REST guide, "Queries"). */
export interface FindParams {
  where: Record<string, unknown>;
  order?: string;
  limit: number;
  skip: number;
  keys?: string[];
  excludeKeys?: string[];
  include: string[];
  /** `includeAll` or `include=*`: every Pointer and Array field of the class is included. */
  includeAll: boolean;
  count: boolean;
  /** The JS SDK asks for a relation's targets through the owner's class and this key. */
  redirectClassNameForKey?: string;
}

/** What `GET /classes/<className>/<objectId>` takes (Parse Server's ALLOWED_GET_QUERY_KEYS). */
const GET_PARAMETERS = new Set(['keys', 'include', 'excludeKeys', 'readPreference', 'includeReadPreference', 'subqueryReadPreference']);

/**
 * Checks the parameters of a request for one object: only `keys`, `include`, `excludeKeys` and the
 * read preferences, as Parse Server allows there.
 * @throws ParseError 102 "Improper encode of parameter" (Parse Server's text), naming the parameter.
 */
export function checkGetParams(raw: Record<string, unknown>): void {
  const refused = Object.keys(raw).find((name) => raw[name] !== undefined && !GET_PARAMETERS.has(name));
  if (refused !== undefined) {
    throw bad(`Improper encode of parameter: ${refused} is not a parameter of a request for one object; use keys, include or excludeKeys, or query the class.`);
  }
}

/** Parameters the JS SDK may send that change nothing here. */
const IGNORED = new Set(['readPreference', 'includeReadPreference', 'subqueryReadPreference', 'hint', 'explain', 'comment']);

const bad = (message: string) => new ParseError(ParseCode.INVALID_QUERY, message);

function integer(name: string, value: unknown): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw bad(`${name} must be an integer, got ${JSON.stringify(value)}.`);
  if (n < 0) throw bad(`${name} must not be negative, got ${n}.`);
  // Past 2^53 - 1 a limit is every row and a skip none; the databases take no larger integer
  // (SQLite refuses a REAL where it wants an integer, PostgreSQL's bigint ends at 2^63 - 1).
  return Math.min(n, Number.MAX_SAFE_INTEGER);
}

/**
 * A list of field names as Parse Server reads one: a query string value is parsed as JSON when it
 * is JSON (the JS SDK sends `keys=["a","b"]`) and the result joined as text, so an array, a
 * comma-separated string and a single name all work.
 */
const list = (name: string, value: unknown): string[] => {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = value;
    }
  }
  if (Array.isArray(parsed) && parsed.every((v) => typeof v === 'string')) parsed = parsed.join(',');
  if (typeof parsed === 'number') parsed = String(parsed);
  if (typeof parsed !== 'string') throw bad(`${name} must be field names, comma-separated or as a JSON array of strings.`);
  return parsed.split(',').map((s) => s.trim()).filter(Boolean);
};

/** A flag as Parse Server reads one: the query string value parsed as JSON, then taken as truthy. */
const flag = (value: unknown): boolean => {
  if (typeof value !== 'string') return Boolean(value);
  try {
    return Boolean(JSON.parse(value));
  } catch {
    return value.length > 0;
  }
};

/**
 * Reads a query's parameters from a GET query string (strings) or an SDK body (JSON values).
 * @throws ParseError 102 for an unknown parameter, invalid JSON in `where` or a bad number; 107 is
 *   not used here because Parse answers 102 for a malformed `where`.
 */
export function parseFindParams(
  raw: Record<string, unknown>,
  /** The app's `defaultLimit` and `maxLimit` options (data/settings.ts); maxLimit caps the default too. */
  limits: { defaultLimit: number; maxLimit: number | null } = { defaultLimit: 100, maxLimit: null },
): FindParams {
  const params: FindParams = { where: {}, limit: limits.defaultLimit, skip: 0, include: [], includeAll: false, count: false };
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    switch (name) {
      case 'where': {
        let where = value;
        if (typeof value === 'string') {
          try {
            where = JSON.parse(value);
          } catch {
            throw bad('where must be URL-encoded JSON, e.g. where={"score":{"$gt":10}}.');
          }
        }
        if (!isPlainObject(where)) throw bad('where must be a JSON object.');
        if (nestsDeeperThan(where)) throw bad(`where nests objects and arrays more than ${MAX_NESTING} levels deep.`);
        params.where = where;
        break;
      }
      case 'order':
        if (typeof value !== 'string') throw bad('order must be a string such as "score,-createdAt".');
        params.order = value;
        break;
      case 'limit':
        params.limit = integer('limit', value);
        break;
      case 'skip':
        params.skip = integer('skip', value);
        break;
      case 'keys':
        params.keys = list('keys', value);
        break;
      case 'excludeKeys':
        params.excludeKeys = list('excludeKeys', value);
        break;
      case 'include':
      {
        const paths = list('include', value);
        if (paths.includes('*')) params.includeAll = true;
        params.include = paths.filter((path) => path !== '*');
        break;
      }
      case 'includeAll':
        if (flag(value)) params.includeAll = true;
        break;
      case 'count':
        params.count = value === 1 || value === '1' || value === true || value === 'true';
        break;
      case 'redirectClassNameForKey':
        if (typeof value !== 'string') throw bad('redirectClassNameForKey must be a field name.');
        params.redirectClassNameForKey = value;
        break;
      default:
        if (!IGNORED.has(name)) throw bad(`Invalid parameter for query: ${name}`);
    }
  }
  if (limits.maxLimit !== null && params.limit > limits.maxLimit) params.limit = limits.maxLimit;
  return params;
}

import { ParseCode, ParseError } from './errors.js';

/**
 * A field path inside an object's JSON (`["address", "city"]`, `["items", "1", "value"]`) that has
 * been checked part by part: the only kind of path the storage adapters write into SQL text
 * (sqlite/layout.ts `jsonPath`, postgres/layout.ts `pathLiteral`), so a client's key reaches SQL
 * only through `fieldPath`, `keyPath` (query/sql.ts) or `extendPath` (docs/design.md, "Security stance").
 *
 * The brand exists only for the compiler: a plain `string[]` does not type-check where a
 * `FieldPath` is asked for, so a new caller cannot skip the check by accident.
 */
export type FieldPath = readonly string[] & { readonly [checked]: true };
declare const checked: unique symbol;

/**
 * One part of a stored field path: an identifier (Parse's key grammar, `[A-Za-z][A-Za-z0-9_]*`, and
 * the server's own `_`-prefixed fields such as `_hashed_password`).
 */
const NAME_PART = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An array index in a dotted key (`items.1.value`); nine digits at most keep the JSON path sane. */
const INDEX_PART = /^\d{1,9}$/;

/** Whether `part` may be part `position` of a field path (an index never comes first). */
export const isPathPart = (part: string, position: number): boolean => NAME_PART.test(part) || (position > 0 && INDEX_PART.test(part));

/** Whether `part` is an array index (`1` in `items.1.value`). */
export const isIndexPart = (part: string | undefined): boolean => part !== undefined && INDEX_PART.test(part);

/**
 * Checks `parts` and brands them as a FieldPath.
 * @param parts the path's parts, e.g. `"score.x".split(".")`.
 * @param refuse makes the error for a bad part (the caller knows the field's role and Parse's code);
 *   by default Parse's 105 `Invalid key name: <parts joined by ".">`.
 * @throws what `refuse` returns (ParseError 105 by default) when `parts` is empty or a part is
 *   neither an identifier nor, after the first, an array index.
 */
export function fieldPath(parts: readonly string[], refuse: (key: string) => Error = invalidKeyName): FieldPath {
  if (parts.length === 0 || !parts.every(isPathPart)) throw refuse(parts.join('.'));
  return Object.freeze([...parts]) as unknown as FieldPath;
}

/**
 * `path` followed by `sub` (a constant sub-path such as `["iso"]` of a Date, or the rest of a dotted
 * key), checked as `fieldPath` checks.
 * @throws Error (not a Parse error: only a programming mistake gets here) for a bad part of `sub`.
 */
export function extendPath(path: FieldPath, sub: readonly string[]): FieldPath {
  if (sub.length === 0) return path;
  return fieldPath([...path, ...sub], (key) => new Error(`Not a field path: ${JSON.stringify(key)}`));
}

/**
 * The parts of `path` again, refusing any that a FieldPath cannot hold: what the SQL writers call
 * before they write a path, so that even a value forced into the type (a cast) never reaches SQL.
 * @throws Error for a part that is not an identifier or an index.
 */
export function pathParts(path: FieldPath): readonly string[] {
  for (let i = 0; i < path.length; i++) {
    if (typeof path[i] !== 'string' || !isPathPart(path[i]!, i)) throw new Error(`Not a field path: ${JSON.stringify(path)}`);
  }
  if (path.length === 0) throw new Error('Not a field path: empty');
  return path;
}

const invalidKeyName = (key: string) => new ParseError(ParseCode.INVALID_KEY_NAME, `Invalid key name: ${key}`);

/**
 * The parts `start` to `end` of `path` as a path of its own (the element path `group` of
 * `sender.group`), checked as `fieldPath` checks: a slice that starts at an array index is no path.
 * @throws Error for such a slice (only a programming mistake gets here).
 */
export function slicePath(path: FieldPath, start: number, end?: number): FieldPath {
  return fieldPath(path.slice(start, end), (key) => new Error(`Not a field path: ${JSON.stringify(key)}`));
}

/**
 * How deep the JSON a client sends may nest (objects and arrays inside one another). SQLite's JSON
 * functions stop at 1,000 levels (JSON_MAX_DEPTH in its json.c) and fail the statement, which a client
 * must not be able to turn into a 500; MongoDB, Parse Server's reference database, stores at most 100.
 * 128 leaves room for a batch's or a query's own wrapping around a 100-level object.
 */
export const MAX_NESTING = 128;

/**
 * Whether `value` (parsed JSON) nests objects and arrays more than `max` levels deep: a scalar is
 * level 0, `{}` and `[]` level 1. Stops descending at `max`, so the cost is bounded by the value's size.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_NESTING): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) if (nestsDeeperThan(child, max - 1)) return true;
  return false;
}

/**
 * `{"$relativeTime": "in 2 days"}`, `"3 hours ago"`, `"now"`: a Date relative to the time of the query,
 * usable with `$lt`/`$lte`/`$gt`/`$gte` on Date fields (Parse Server's `Utils.relativeTimeToDate`; its
 * rules and error texts, observed on Parse Server 9.10, are kept so that clients see the same reasons).
 */
import { invalidJson, isPlainObject } from './sql.js';

const SECONDS: Readonly<Record<string, number>> = Object.fromEntries(
  (
    [
      [['yr', 'yrs', 'year', 'years'], 365 * 24 * 3600],
      [['wk', 'wks', 'week', 'weeks'], 7 * 24 * 3600],
      [['d', 'day', 'days'], 24 * 3600],
      [['hr', 'hrs', 'hour', 'hours'], 3600],
      [['min', 'mins', 'minute', 'minutes'], 60],
      [['sec', 'secs', 'second', 'seconds'], 1],
    ] as const
  ).flatMap(([names, seconds]) => names.map((name) => [name, seconds])),
);

/** Whether a query value is a `$relativeTime` object (and so needs relativeDate). */
export const isRelativeTime = (value: unknown): value is Record<string, unknown> => isPlainObject(value) && '$relativeTime' in value;

/** The offset in seconds that `text` names, or the reason it names none (Parse Server's texts). */
function offsetSeconds(text: string): number | string {
  const lower = text.toLowerCase();
  let parts = lower.split(' ').filter((p) => p !== '');
  const future = parts[0] === 'in';
  const past = parts[parts.length - 1] === 'ago';
  if (!future && !past && lower !== 'now') return "Time should either start with 'in' or end with 'ago'";
  if (future && past) return "Time cannot have both 'in' and 'ago'";
  parts = future ? parts.slice(1) : parts.slice(0, -1);
  if (parts.length % 2 !== 0) return 'Invalid time string. Dangling unit or number.';
  let seconds = 0;
  for (let i = 0; i < parts.length; i += 2) {
    const count = Number(parts[i]);
    if (!Number.isInteger(count)) return `'${parts[i]}' is not an integer.`;
    const unit = Object.hasOwn(SECONDS, parts[i + 1]!) ? SECONDS[parts[i + 1]!] : undefined;
    if (unit === undefined) return `Invalid interval: '${parts[i + 1]}'`;
    seconds += count * unit;
  }
  return future ? seconds : -seconds;
}

/**
 * The ISO date a `{"$relativeTime": text}` names, relative to `now`.
 * @throws ParseError 107 when it is not an object with one string `$relativeTime`, or the text is not
 *   `in <n> <unit>...`, `<n> <unit>... ago` or `now` ("bad $relativeTime (<text>) value. <reason>").
 */
export function relativeDate(value: Record<string, unknown>, now = Date.now()): string {
  const text = value.$relativeTime;
  if (typeof text !== 'string' || Object.keys(value).length !== 1) {
    throw invalidJson('$relativeTime must be a string such as "in 2 days" or "3 hours ago"');
  }
  const offset = offsetSeconds(text);
  if (typeof offset === 'string') throw invalidJson(`bad $relativeTime (${text}) value. ${offset}`);
  const date = new Date(now + offset * 1000);
  if (Number.isNaN(date.getTime())) throw invalidJson(`bad $relativeTime (${text}) value. The time is out of range.`);
  return date.toISOString();
}

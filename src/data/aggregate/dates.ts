/**
 * MongoDB's date part operators (`$year`, `$month`, `$dayOfMonth`, `$hour`, `$minute`, `$second`,
 * `$millisecond`, `$dayOfYear`, `$dayOfWeek`, `$week`, `$isoWeek`, `$isoWeekYear`, `$isoDayOfWeek`),
 * numbered as MongoDB numbers them (its manual, "Date Expression Operators"): `$dayOfWeek` 1 = Sunday,
 * `$week` as strftime's %U (weeks from the first Sunday, 0 before it), `$isoWeek` as %V. The operand is
 * `<date>`, `[<date>]` or `{date: <date>, timezone: <"UTC" | "+hh:mm" | Olson name>}`; a missing or null
 * date gives null. Parse Server on PostgreSQL maps these to PostgreSQL's EXTRACT, whose day of week
 * (0 = Sunday), week (ISO) and millisecond (seconds included) differ: these follow MongoDB.
 */
import { invalid, isDate, isPlainObject, typeName, type Doc } from './values.js';

type Evaluate = (doc: Doc) => unknown;
type CompileExpr = (expr: unknown, where: string) => Evaluate;

const DAY = 86_400_000;

/** The parts of an instant that the operators read, on the wall clock of the time zone. */
interface Clock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  /** 0 = Sunday. */
  weekday: number;
  /** 0 = January 1st. */
  yearDay: number;
}

function clock(wallMs: number): Clock {
  const d = new Date(wallMs);
  const year = d.getUTCFullYear();
  return {
    year,
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
    weekday: d.getUTCDay(),
    yearDay: Math.floor((Date.UTC(year, d.getUTCMonth(), d.getUTCDate()) - Date.UTC(year, 0, 1)) / DAY),
  };
}

const isoWeekday = (c: Clock) => (c.weekday === 0 ? 7 : c.weekday);

/** The ISO week-numbering year and week: those of the Thursday of the date's Monday-to-Sunday week. */
function isoWeek(c: Clock): { year: number; week: number } {
  const thursday = clock(Date.UTC(c.year, c.month - 1, c.day) + (4 - isoWeekday(c)) * DAY);
  return { year: thursday.year, week: Math.floor(thursday.yearDay / 7) + 1 };
}

const PARTS: Record<string, (c: Clock) => number> = {
  $year: (c) => c.year,
  $month: (c) => c.month,
  $dayOfMonth: (c) => c.day,
  $hour: (c) => c.hour,
  $minute: (c) => c.minute,
  $second: (c) => c.second,
  $millisecond: (c) => c.ms,
  $dayOfYear: (c) => c.yearDay + 1,
  $dayOfWeek: (c) => c.weekday + 1,
  $week: (c) => Math.floor((c.yearDay + 7 - c.weekday) / 7),
  $isoDayOfWeek: isoWeekday,
  $isoWeek: (c) => isoWeek(c).week,
  $isoWeekYear: (c) => isoWeek(c).year,
};

const OFFSET = /^([+-])(\d{2}):?(\d{2})?$/;

/** The time zone's offset from UTC in ms at `utcMs`, for "UTC", "+hh:mm"/"+hhmm"/"+hh" or an Olson name. */
function zoneOffset(zone: string, where: string): (utcMs: number) => number {
  if (zone === 'UTC' || zone === 'GMT' || zone === 'Z') return () => 0;
  const fixed = OFFSET.exec(zone);
  if (fixed) {
    const ms = (Number(fixed[2]) * 60 + Number(fixed[3] ?? 0)) * 60_000;
    return () => (fixed[1] === '-' ? -ms : ms);
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  } catch {
    throw invalid(`${where}: unrecognized time zone ${JSON.stringify(zone)}; use "UTC", an offset such as "+02:00" or an Olson name such as "Europe/Paris".`);
  }
  return (utcMs) => {
    const p = Object.fromEntries(format.formatToParts(new Date(utcMs)).map(({ type, value }) => [type, Number(value)]));
    const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
    return wall - (utcMs - (((utcMs % 1000) + 1000) % 1000));
  };
}

/** The operand's parts: the date expression and the time zone's offset function. */
function operand(op: string, arg: unknown, where: string, compile: CompileExpr): { date: Evaluate; offset: (utcMs: number) => number } {
  const at = `${where}.${op}`;
  if (Array.isArray(arg)) {
    if (arg.length !== 1) throw invalid(`${at} takes exactly 1 argument.`);
    return { date: compile(arg[0], at), offset: () => 0 };
  }
  if (isPlainObject(arg) && 'date' in arg && !Object.keys(arg).some((k) => k.startsWith('$'))) {
    const extra = Object.keys(arg).find((k) => k !== 'date' && k !== 'timezone');
    if (extra) throw invalid(`${at}: unknown argument ${extra}; use date and timezone.`);
    if (arg.timezone !== undefined && typeof arg.timezone !== 'string') throw invalid(`${at}: timezone must be a string such as "UTC" or "Europe/Paris".`);
    return { date: compile(arg.date, at), offset: zoneOffset(arg.timezone ?? 'UTC', at) };
  }
  return { date: compile(arg, at), offset: () => 0 };
}

/**
 * Compiles `{<op>: <operand>}` for a date part operator, or answers undefined when `op` is not one.
 * The evaluator throws ParseError 102 for a value that is not a Date ("can't convert from string to
 * Date", as MongoDB refuses it), naming `where`.
 */
export function compileDatePart(op: string, arg: unknown, where: string, compile: CompileExpr): Evaluate | undefined {
  const part = PARTS[op];
  if (!part) return undefined;
  const { date, offset } = operand(op, arg, where, compile);
  return (doc) => {
    const value = date(doc);
    if (value === undefined || value === null) return null;
    if (!isDate(value)) throw invalid(`${where}: ${op} can't convert from ${typeName(value)} to Date.`);
    const utc = Date.parse(value.iso);
    return part(clock(utc + offset(utc)));
  };
}

/** The names of the date part operators, for messages. */
export const DATE_PART_OPERATORS = Object.keys(PARTS);

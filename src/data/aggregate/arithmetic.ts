/**
 * MongoDB's arithmetic expression operators (its manual, "Arithmetic Expression Operators"): `$add`
 * (numbers, and at most one Date which it moves by milliseconds), `$subtract` (numbers, Date − Date in
 * milliseconds, Date − number), `$multiply`, `$divide`, `$mod`, `$pow`, and the one-operand `$abs`,
 * `$ceil`, `$floor`, `$sqrt`, `$exp`, `$ln`, `$log10`, `$trunc`, `$round` (with an optional place).
 * A missing or null operand gives null, as in MongoDB; another type, a division by zero or a logarithm of
 * a non-positive number is a 102 naming the stage field. Parse Server on PostgreSQL evaluates none of
 * them (a `$project` drops the field, a `$sum` of one counts the objects).
 */
import { dateValue, invalid, isDate, typeName, type Doc } from './values.js';

type Evaluate = (doc: Doc) => unknown;
type CompileExpr = (expr: unknown, where: string) => Evaluate;

/** The operand list: `[a, b, ...]` (between `min` and `max` of them), or a bare operand for one. */
function operands(arg: unknown, at: string, [min, max]: readonly [number, number], compile: CompileExpr): Evaluate[] {
  const list = Array.isArray(arg) ? arg : [arg];
  if (list.length < min || list.length > max) {
    throw invalid(`${at} takes ${min === max ? `exactly ${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`} argument${max === 1 ? '' : 's'}.`);
  }
  return list.map((e) => compile(e, at));
}

const ONE = [1, 1] as const;
const TWO = [2, 2] as const;
const ANY = [1, Infinity] as const;

const notNumber = (at: string, op: string, v: unknown) => invalid(`${at}: ${op} only supports numeric types, not ${typeName(v)}.`);

/** Evaluates the operands; undefined when one is missing or null (the result is then null). */
const values = (evaluators: Evaluate[], doc: Doc): unknown[] | undefined => {
  const out: unknown[] = [];
  for (const e of evaluators) {
    const v = e(doc);
    if (v === undefined || v === null) return undefined;
    out.push(v);
  }
  return out;
};

const numbers = (list: unknown[], at: string, op: string): number[] =>
  list.map((v) => {
    if (typeof v !== 'number') throw notNumber(at, op, v);
    return v;
  });

const msOf = (v: unknown): number => Date.parse((v as { iso: string }).iso);

/** `$round`/`$trunc` to `place` decimal places (negative places round to tens, hundreds...). */
const toPlace = (fn: (x: number) => number) => (x: number, place = 0) => {
  const scale = 10 ** place;
  return fn(x * scale) / scale;
};

/** Half to even, as MongoDB's `$round` rounds. */
const roundHalfEven = (x: number) => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};

const UNARY: Record<string, { fn: (x: number) => number; check?: (x: number) => string | undefined }> = {
  $abs: { fn: Math.abs },
  $ceil: { fn: Math.ceil },
  $floor: { fn: Math.floor },
  $exp: { fn: Math.exp },
  $sqrt: { fn: Math.sqrt, check: (x) => (x < 0 ? 'its argument must be greater than or equal to 0' : undefined) },
  $ln: { fn: Math.log, check: (x) => (x <= 0 ? 'its argument must be a positive number' : undefined) },
  $log10: { fn: Math.log10, check: (x) => (x <= 0 ? 'its argument must be a positive number' : undefined) },
};

type Builder = (op: string, arg: unknown, at: string, compile: CompileExpr) => Evaluate;

const unary: Builder = (op, arg, at, compile) => {
  const [e] = operands(arg, at, ONE, compile);
  const { fn, check } = UNARY[op]!;
  return (doc) => {
    const v = values([e!], doc);
    if (!v) return null;
    const [x] = numbers(v, at, op);
    const problem = check?.(x!);
    if (problem) throw invalid(`${at}: ${op}'s ${problem}.`);
    return fn(x!);
  };
};

const rounding = (fn: (x: number) => number): Builder => (op, arg, at, compile) => {
  const es = operands(arg, at, [1, 2], compile);
  const apply = toPlace(fn);
  return (doc) => {
    const v = values(es, doc);
    if (!v) return null;
    const [x, place] = numbers(v, at, op);
    if (place !== undefined && (!Number.isInteger(place) || place < -20 || place > 100)) throw invalid(`${at}: ${op}'s place must be an integer between -20 and 100.`);
    return apply(x!, place);
  };
};

const BUILDERS: Record<string, Builder> = {
  $add: (op, arg, at, compile) => {
    const es = operands(arg, at, ANY, compile);
    return (doc) => {
      const v = values(es, doc);
      if (!v) return null;
      let total = 0;
      let dates = 0;
      for (const x of v) {
        if (isDate(x)) {
          dates++;
          total += msOf(x);
        } else if (typeof x === 'number') total += x;
        else throw invalid(`${at}: $add only supports numeric or date types, not ${typeName(x)}.`);
      }
      if (dates > 1) throw invalid(`${at}: only one date allowed in an $add expression.`);
      return dates ? dateValue(total) : total;
    };
  },
  $subtract: (op, arg, at, compile) => {
    const es = operands(arg, at, TWO, compile);
    return (doc) => {
      const v = values(es, doc);
      if (!v) return null;
      const [a, b] = v;
      if (isDate(a) && isDate(b)) return msOf(a) - msOf(b);
      if (isDate(a) && typeof b === 'number') return dateValue(msOf(a) - b);
      if (typeof a === 'number' && typeof b === 'number') return a - b;
      throw invalid(`${at}: can't $subtract ${typeName(b)} from ${typeName(a)}.`);
    };
  },
  $multiply: (op, arg, at, compile) => {
    const es = operands(arg, at, ANY, compile);
    return (doc) => {
      const v = values(es, doc);
      return v ? numbers(v, at, op).reduce((p, x) => p * x, 1) : null;
    };
  },
  $divide: (op, arg, at, compile) => {
    const es = operands(arg, at, TWO, compile);
    return (doc) => {
      const v = values(es, doc);
      if (!v) return null;
      const [a, b] = numbers(v, at, op);
      if (b === 0) throw invalid(`${at}: can't $divide by zero.`);
      return a! / b!;
    };
  },
  $mod: (op, arg, at, compile) => {
    const es = operands(arg, at, TWO, compile);
    return (doc) => {
      const v = values(es, doc);
      if (!v) return null;
      const [a, b] = numbers(v, at, op);
      if (b === 0) throw invalid(`${at}: can't $mod by zero.`);
      return a! % b!;
    };
  },
  $pow: (op, arg, at, compile) => {
    const es = operands(arg, at, TWO, compile);
    return (doc) => {
      const v = values(es, doc);
      if (!v) return null;
      const [a, b] = numbers(v, at, op);
      if (a === 0 && b! < 0) throw invalid(`${at}: $pow cannot take a base of 0 and a negative exponent.`);
      return a! ** b!;
    };
  },
  $round: rounding(roundHalfEven),
  $trunc: rounding(Math.trunc),
  ...Object.fromEntries(Object.keys(UNARY).map((op) => [op, unary])),
};

/** Compiles `{<op>: <operands>}` for an arithmetic operator, or answers undefined when `op` is not one. */
export function compileArithmetic(op: string, arg: unknown, where: string, compile: CompileExpr): Evaluate | undefined {
  const build = BUILDERS[op];
  return build ? build(op, arg, `${where}.${op}`, compile) : undefined;
}

/** The names of the arithmetic operators, for messages. */
export const ARITHMETIC_OPERATORS = Object.keys(BUILDERS);

/**
 * Query shapes compiled once: a find or count whose `where` differs from an earlier one only in its
 * plain values (`{"score": {"$gte": 500}}` and `{"score": {"$gte": 900}}`) reuses that one's SQL
 * text, with the new values bound in their places, instead of walking the compiler again (statement.ts;
 * the engine bench measured the compile at about two thirds of a find by objectId). The text being the
 * same, the database's prepared statement is reused too (sqlite/database.ts `rowStmt`; PostgreSQL
 * names it, postgres/database.ts).
 *
 * The shape of a query is its class, its `order`, whether its caller is the master key, and its `where`
 * with the values in value positions replaced by their kind: a field's equality (`{"a": 1}`), the
 * operand of `$eq`, `$ne`, `$lt`, `$lte`, `$gt`, `$gte`, and each element of `$in`, `$nin` and `$all`,
 * when it is a string, a number or a boolean; plus its skip and the caller's principals other than
 * `*` (all bound). Everything else is part of the shape as written (`$exists`, `$regex`, typed values
 * such as Dates and pointers, geo operators), and so is the limit, which a dialect may write into the
 * text (sqlite/dialect.ts `limitClause`): clients page with a few limits, and a shape per limit keeps
 * each statement's text the same for all its values.
 *
 * A shape is trusted only once the compiler has shown where each value goes: the first query of a
 * shape is compiled twice, with its own values and with probes (every value replaced by a different
 * one of the same kind: another sign, other letters and spaces), and the two statements must have the
 * same text and the same parameters except that each differing parameter is, in both, exactly one
 * value (bound as it is, or as its JSON text, as PostgreSQL binds numbers). A shape whose SQL depends
 * on a value any other way (a date parsed from a string, a sub-query, a value transformed) is marked
 * as not cached and compiled for every query. Class-level checks the compiler made (`QueryAccess`:
 * protected fields, sub-query permissions) are replayed for every caller.
 */
import type { QueryAccess } from '../auth/queryAccess.js';
import type { SqlFragment } from './dialect.js';
import { compileCount, compileSelect, filterTree, selectTree, type ReadQuery, type StatementTarget } from './statement.js';

/** Operators whose operand is bound as a value: a slot when it is a string, number or boolean. */
const VALUE_OPERATORS = new Set(['$eq', '$ne', '$lt', '$lte', '$gt', '$gte']);
/** Operators whose operand is an array of values, each a slot. */
const LIST_OPERATORS = new Set(['$in', '$nin', '$all']);
/** Operators that read other classes or depend on the caller beyond what is replayed: never cached. */
const UNCACHED_OPERATORS = new Set(['$inQuery', '$notInQuery', '$select', '$dontSelect', '$relatedTo', '$text']);

/** Where one parameter of a cached statement comes from. */
type Slot = { value: unknown } | { leaf: number; json: boolean };

/** A shape's statement: its SQL, its parameters' sources and the access checks its compile made. */
interface Entry {
  sql: string;
  slots: Slot[];
  checks: Array<(access: QueryAccess) => void>;
}

/** A query's shape: its key, and its values in the order of the walk. */
interface Shape {
  key: string;
  leaves: unknown[];
}

const isSlotValue = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * The kind of a value in a shape's key: s (a string), o (a string starting with `{` or `[`, which
 * SQLite's json_extract could give for an object or array, so its equality keeps a type guard:
 * sqlite/dialect.ts), e (the empty string), i/j (an integer ≥ 0 / < 0), f/g (another number ≥ 0 /
 * < 0), t/u (true/false, each compiled with its own type guard).
 */
function kindOf(v: string | number | boolean): string {
  if (typeof v === 'string') return v === '' ? 'e' : v[0] === '{' || v[0] === '[' ? 'o' : 's';
  if (typeof v === 'boolean') return v ? 't' : 'u';
  if (Number.isInteger(v)) return v >= 0 ? 'i' : 'j';
  return v >= 0 ? 'f' : 'g';
}

/**
 * A different value of the same kind as `v`, for the probe compile: strings with other letters,
 * capitals and spaces (a trimmed or lower-cased value would show), other numbers of the same sign
 * and integrality. A kind of one value (the empty string, true, false) is probed with itself, so it
 * is a constant of the statement.
 */
function probeOf(v: string | number | boolean, i: number): string | number | boolean {
  if (typeof v === 'boolean' || v === '') return v;
  if (typeof v === 'string') {
    const probe = `${kindOf(v) === 'o' ? v[0] : ''} Probe ${i} Q `;
    return probe === v ? `${probe}X` : probe;
  }
  return probeNumber(v, i);
}

/**
 * The probe of the number at index `i`: unique to `i` (1,000,003 + 2i, and .5 more for a fraction,
 * so no two probes are equal and each names its value), of `v`'s sign and integrality, never `v`.
 */
function probeNumber(v: number, i: number): number {
  let probe = 1_000_003 + 2 * i;
  if (Math.abs(v) === probe || Math.abs(v) === probe + 0.5) probe++;
  const magnitude = Number.isInteger(v) ? probe : probe + 0.5;
  return v >= 0 ? magnitude : -magnitude;
}

/**
 * Walks a `where`, appending to `out` its shape and calling `leaf` for each value in a value position
 * (which returns the value to put there in `rebuilt`, when rebuilding).
 * @returns false when the where holds an operator that is never cached.
 */
function walk(node: unknown, out: string[], leaf: (v: string | number | boolean) => unknown, rebuild: boolean): { ok: boolean; rebuilt: unknown } {
  if (typeof node !== 'object' || node === null) {
    out.push(JSON.stringify(node) ?? 'undefined');
    return { ok: true, rebuilt: node };
  }
  if (Array.isArray(node)) {
    out.push('[');
    const rebuilt: unknown[] = [];
    for (const sub of node) {
      const r = walk(sub, out, leaf, rebuild);
      if (!r.ok) return r;
      if (rebuild) rebuilt.push(r.rebuilt);
      out.push(',');
    }
    out.push(']');
    return { ok: true, rebuilt };
  }
  const object = node as Record<string, unknown>;
  // A typed value (a Date, a pointer...) is part of the shape as written.
  if ('__type' in object) {
    for (const key in object) if (key.startsWith('$')) return { ok: false, rebuilt: undefined };
    out.push(JSON.stringify(object));
    return { ok: true, rebuilt: object };
  }
  out.push('{');
  const rebuilt: Record<string, unknown> = {};
  for (const key in object) {
    const value = object[key];
    if (UNCACHED_OPERATORS.has(key)) return { ok: false, rebuilt: undefined };
    out.push(JSON.stringify(key), ':');
    if (isSlotValue(value) && (!key.startsWith('$') || VALUE_OPERATORS.has(key))) {
      out.push('#', kindOf(value));
      rebuilt[key] = leaf(value);
    } else if (LIST_OPERATORS.has(key) && Array.isArray(value) && value.every(isSlotValue) && new Set(value).size === value.length) {
      // A list with a value twice is compiled with it once (values.ts `oneOf`), so its statement
      // depends on which values are equal: such a list is part of the shape as written.
      out.push('[');
      const list = value.map((v) => {
        out.push('#', kindOf(v), ',');
        return leaf(v);
      });
      out.push(']');
      rebuilt[key] = list;
    } else {
      const r = walk(value, out, leaf, rebuild);
      if (!r.ok) return r;
      rebuilt[key] = r.rebuilt;
    }
    out.push(',');
  }
  out.push('}');
  return { ok: true, rebuilt };
}

/**
 * A QueryAccess that records each check it passes on, to be replayed for later callers; `mayGet`
 * and `scopeWhere` (whose answers change the statement) mark the shape as not cached.
 */
function recording(access: QueryAccess, checks: Array<(access: QueryAccess) => void>, uncached: () => void): QueryAccess {
  return {
    checkFind: (className) => {
      checks.push((a) => a.checkFind(className));
      access.checkFind(className);
    },
    checkField: (className, key, use) => {
      checks.push((a) => a.checkField(className, key, use));
      access.checkField(className, key, use);
    },
    mayGet: (className) => {
      uncached();
      return access.mayGet(className);
    },
    scopeWhere: (className, where) => {
      uncached();
      return access.scopeWhere(className, where);
    },
  };
}

/** Values a cached shape may have: a longer `$in` list is rare, and compiling it costs little next to running it. */
const MAX_LEAVES = 256;

/** Entries kept per cache; past it the cache starts again (shapes are few in a real app). */
const MAX_ENTRIES = 1000;

/**
 * The statements of one app's finds and counts, by shape (see the file's comment). Cleared when the
 * app's schema changes (`generation`).
 */
export class StatementCache {
  private readonly entries = new Map<string, Entry | null>();
  private seen = -1;
  /** Statements given from a cached shape, compiled for a new shape, and compiled for a shape never cached. */
  readonly stats = { hits: 0, learned: 0, uncached: 0 };

  /**
   * @param target the app's dialect and schema lookup.
   * @param generation a number that changes whenever the schema does (storage/schemaCache.ts).
   */
  constructor(
    private readonly target: StatementTarget,
    private readonly generation: () => number,
  ) {}

  /**
   * The SELECT of a find (statement.ts `compileSelect`).
   * @throws ParseError as selectTree does, for this query or (replayed) for this caller.
   */
  select(className: string, query: ReadQuery): SqlFragment {
    return this.statement('select', className, query, (q) => compileSelect(selectTree(className, q, this.target), this.target.dialect));
  }

  /**
   * The SELECT of a find with other columns than the row's (statement.ts `compileSelect`): `columns`,
   * a constant of the caller's, cached under its own `kind`.
   * @throws ParseError as selectTree does.
   */
  selectColumns(kind: string, columns: string, className: string, query: ReadQuery): SqlFragment {
    return this.statement(kind, className, query, (q) => compileSelect(selectTree(className, q, this.target), this.target.dialect, columns));
  }

  /**
   * The count of a find's rows (statement.ts `compileCount`).
   * @throws ParseError as filterTree does.
   */
  count(className: string, query: Pick<ReadQuery, 'where' | 'principals' | 'access'>): SqlFragment {
    return this.statement('count', className, query, (q) => compileCount(filterTree(className, q, this.target), this.target.dialect));
  }

  private statement(kind: string, className: string, query: ReadQuery, compile: (query: ReadQuery) => SqlFragment): SqlFragment {
    const generation = this.generation();
    if (generation !== this.seen) {
      this.entries.clear();
      this.seen = generation;
    }
    const shape = shapeOf(kind, className, query);
    const entry = shape && this.entries.get(shape.key);
    if (!shape || entry === null) {
      this.stats.uncached++;
      return compile(query);
    }
    if (entry) {
      this.stats.hits++;
      if (query.access) for (const check of entry.checks) check(query.access);
      return { sql: entry.sql, params: entry.slots.map((s) => ('value' in s ? s.value : s.json ? JSON.stringify(shape.leaves[s.leaf]) : shape.leaves[s.leaf])) };
    }
    // First of its shape: compiled with its own values (which answers, or throws as always), then
    // with probes, to learn where each value goes.
    const checks: Array<(access: QueryAccess) => void> = [];
    let cached = true;
    const own = compile(query.access ? { ...query, access: recording(query.access, checks, () => (cached = false)) } : query);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const learned = cached ? learn(own, shape.leaves, query, compile, checks) : null;
    this.entries.set(shape.key, learned);
    if (learned) this.stats.learned++;
    else this.stats.uncached++;
    return own;
  }
}

/**
 * The shape of a query (see the file's comment), or undefined when it holds an operator never
 * cached. Leaves: the where's values in walk order, then the principals other than `*`, then skip.
 */
function shapeOf(kind: string, className: string, query: ReadQuery): Shape | undefined {
  const out: string[] = [kind, '|', className, '|', query.order ?? '', '|'];
  const leaves: unknown[] = [];
  if (!walk(query.where ?? {}, out, (v) => leaves.push(v), false).ok) return undefined;
  appendRest(query, out, leaves);
  if (leaves.length > MAX_LEAVES) return undefined;
  return { key: out.join(''), leaves };
}

function appendRest(query: ReadQuery, out: string[], leaves: unknown[]): void {
  if (query.principals === undefined) out.push('|master');
  else {
    out.push('|');
    for (const p of query.principals) {
      if (p === '*') out.push('*,');
      else {
        out.push('#,');
        leaves.push(p);
      }
    }
  }
  out.push(`|${query.access ? 'access' : ''}|${query.limit ?? ''}|${query.skip === undefined ? '' : '#'}`);
  if (query.skip !== undefined) leaves.push(query.skip);
}

/**
 * The entry of a shape, from its statement with the query's own values and one with probes; null
 * (never cached) when the two differ other than by values bound where the leaves are.
 */
function learn(own: SqlFragment, leaves: unknown[], query: ReadQuery, compile: (query: ReadQuery) => SqlFragment, checks: Entry['checks']): Entry | null {
  const probes: unknown[] = [];
  const out: string[] = [];
  const { rebuilt } = walk(query.where ?? {}, out, (v) => {
    const probe = probeOf(v, probes.length);
    probes.push(probe);
    return probe;
  }, true);
  const principals = query.principals?.map((p) => {
    if (p === '*') return p;
    const probe = ` Probe ${probes.length} P `;
    probes.push(probe === p ? `${probe}X` : probe);
    return probes[probes.length - 1] as string;
  });
  const skip = query.skip === undefined ? undefined : probeNumber(query.skip, probes.length);
  if (skip !== undefined) probes.push(skip);
  if (probes.length !== leaves.length) return null;
  let probed: SqlFragment;
  try {
    // The probe compile checks nothing of the caller's: its checks are the same as the first's.
    probed = compile({ ...query, where: rebuilt, principals, skip, access: query.access && permissive });
  } catch {
    return null;
  }
  if (probed.sql !== own.sql || probed.params.length !== own.params.length) return null;
  // Each probe is unique to its leaf (probeOf), so a parameter's probe names its leaf.
  const byProbe = new Map<unknown, number>();
  const byProbeJson = new Map<string, number>();
  probes.forEach((probe, i) => {
    byProbe.set(probe, i);
    byProbeJson.set(JSON.stringify(probe), i);
  });
  const slots: Slot[] = [];
  for (let k = 0; k < own.params.length; k++) {
    const a = own.params[k];
    const b = probed.params[k];
    if (Object.is(a, b)) {
      slots.push({ value: a });
      continue;
    }
    const raw = byProbe.get(b);
    if (raw !== undefined && Object.is(leaves[raw], a)) {
      slots.push({ leaf: raw, json: false });
      continue;
    }
    const json = typeof b === 'string' ? byProbeJson.get(b) : undefined;
    if (json === undefined || a !== JSON.stringify(leaves[json])) return null;
    slots.push({ leaf: json, json: true });
  }
  return { sql: own.sql, slots, checks };
}

/** The access of the probe compile: every check passes (the real ones ran on the first compile). */
const permissive: QueryAccess = {
  checkFind: () => undefined,
  checkField: () => undefined,
  mayGet: () => true,
  scopeWhere: (_className, where) => where,
};

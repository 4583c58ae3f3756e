import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../src/data/errors.js';
import { extendPath, fieldPath, pathParts, type FieldPath } from '../src/data/fieldPath.js';
import { pathLiteral } from '../src/data/storage/postgres/layout.js';
import { jsonPath, quoteIdent } from '../src/data/storage/sqlite/layout.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

/*
 * The one way a field path gets into SQL text (src/data/fieldPath.ts, the layouts' jsonPath and
 * pathLiteral), checked with arbitrary Unicode parts against the real databases: a path is either
 * refused with Parse's 105, or its literal is one SQL token that reads exactly that path.
 */

/** Parts that look like names, indexes, SQL or JSON punctuation, or anything at all. */
const part = fc.oneof(
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/),
  fc.stringMatching(/^\d{1,3}$/),
  fc.constantFrom("'", '"', '\\', '}', '{', ',', '[', ']', '$', '.', ' ', ';', '--', '\u0000', 'é', '😀', "x'); DROP TABLE t; --"),
  fc.string({ unit: 'binary', maxLength: 10 }),
);
const parts = fc.array(part, { minLength: 0, maxLength: 5 });

/** An object holding `value` at `path` (an index part makes an array with that element). */
function holding(path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (/^\d+$/.test(head!)) {
    const array: unknown[] = new Array(Number(head)).fill(null);
    array.push(holding(rest, value));
    return array;
  }
  return { [head!]: holding(rest, value) };
}

const accepted = (candidate: readonly string[]): FieldPath | undefined => {
  try {
    return fieldPath(candidate);
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    expect((error as ParseError).code).toBe(105);
    return undefined;
  }
};

describe('fieldPath', () => {
  it('accepts exactly identifiers, and array indexes after the first part', () => {
    fc.assert(
      fc.property(parts, (candidate) => {
        const path = accepted(candidate);
        const valid = candidate.length > 0 && candidate.every((p, i) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(p) || (i > 0 && /^\d{1,9}$/.test(p)));
        expect(path !== undefined).toBe(valid);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a value forced into the type at the point where SQL is written', () => {
    const forced = ['score', "x'); DROP TABLE t; --"] as unknown as FieldPath;
    expect(() => pathParts(forced)).toThrow(/Not a field path/);
    expect(() => jsonPath(forced)).toThrow(/Not a field path/);
    expect(() => pathLiteral(forced)).toThrow(/Not a field path/);
    expect(() => extendPath(fieldPath(['a']), ['"'])).toThrow(/Not a field path/);
    expect(() => quoteIdent('a\u0000b')).toThrow(/Not an SQL identifier/);
  });
});

describe('SQLite: jsonPath', () => {
  it('is one literal that reads the value at the path', () => {
    const db = new Database(':memory:');
    fc.assert(
      fc.property(parts, fc.string(), (candidate, value) => {
        const path = accepted(candidate);
        if (!path) return;
        // prepare() refuses text holding a second statement; the literal must also be the whole argument.
        const read = db.prepare(`SELECT json_extract(?, ${jsonPath(path)}) AS v`).get(JSON.stringify(holding(path, value))) as { v: unknown };
        expect(read.v).toBe(value);
      }),
      { numRuns: 1000 },
    );
    db.close();
  });
});

describe.runIf(onPostgres)('PostgreSQL: pathLiteral', () => {
  it('is one literal that reads the value at the path', async () => {
    await fc.assert(
      fc.asyncProperty(parts, fc.string().filter((s) => !s.includes('\u0000')), async (candidate, value) => {
        const path = accepted(candidate);
        if (!path) return;
        const [row] = await pgQuery(`SELECT $1::jsonb #>> ${pathLiteral(path)} AS v`, [JSON.stringify(holding(path, value))]);
        expect(row!.v).toBe(value);
      }),
      { numRuns: 200 },
    );
  });
});

import type { Run } from './run.js';

/**
 * One row to insert into `table` (already quoted and qualified): a value per column, each of the
 * PostgreSQL type at the same place in `types` (`text`, `jsonb`...).
 */
export interface RowInsert {
  readonly table: string;
  /** Quoted column names. */
  readonly columns: readonly string[];
  readonly types: readonly string[];
  readonly values: readonly unknown[];
}

/** The statement of one row: `INSERT INTO t (a, b) VALUES (?::text, ?::jsonb)`. */
export function singleInsert(insert: RowInsert): { sql: string; params: readonly unknown[] } {
  const placeholders = insert.types.map((type) => `?::${type}`).join(', ');
  return { sql: `INSERT INTO ${insert.table} (${insert.columns.join(', ')}) VALUES (${placeholders})`, params: insert.values };
}

/**
 * The statement of many rows into one table, one array per column, so that any number of rows is
 * one statement shape (prepared once per connection): `INSERT INTO t (a, b) SELECT * FROM
 * unnest(?::text[], ?::jsonb[])`.
 */
function manyInsert(rows: readonly RowInsert[]): { sql: string; params: readonly unknown[] } {
  const first = rows[0]!;
  const arrays = first.types.map((type) => `?::${type}[]`).join(', ');
  const params = first.columns.map((_, column) => rows.map((row) => row.values[column]));
  return { sql: `INSERT INTO ${first.table} (${first.columns.join(', ')}) SELECT * FROM unnest(${arrays})`, params };
}

/** Most rows one statement carries. */
const MAX_ROWS = 256;

/**
 * SQLSTATE classes of a statement refused for what a row holds (22: data exception, such as a
 * `\u0000` in a jsonb string; 23: integrity constraint violation), after which each row of a shared
 * statement is tried alone, so that only the row at fault fails. Anything else (a lost connection)
 * fails every row of the statement: it may have committed, and a second try could write twice.
 */
const ROW_FAULT = /^2[23]/;

interface Waiting {
  readonly insert: RowInsert;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for creates on PostgreSQL: a create whose transaction is
 * nothing but its insert is sent alone, which PostgreSQL commits as one. While such an insert into
 * a table is being committed, the next ones into that table wait for it, then go together as one
 * statement and one commit; each caller is answered once the commit holding its row is done, so no
 * acknowledged write can be lost, and under concurrent creates PostgreSQL and this process do one
 * round trip and one WAL flush for many rows. One client creating objects one after another never
 * waits: its insert finds nothing under way and goes at once.
 */
export class InsertBatches {
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly underWay = new Set<string>();

  /** @param run runs one statement on a pooled connection (autocommit). */
  constructor(private readonly run: Run) {}

  /**
   * Inserts the row, committed, sharing a statement with inserts into the same table that wait.
   * @throws what PostgreSQL answered for this row (alone, when the shared statement was refused for
   *   a row's data), or for the statement (any other failure).
   */
  insert(insert: RowInsert): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let queue = this.waiting.get(insert.table);
      if (!queue) this.waiting.set(insert.table, (queue = []));
      queue.push({ insert, resolve, reject });
      if (!this.underWay.has(insert.table)) void this.send(insert.table);
    });
  }

  /** Sends what waits for `table`, then again while more arrived meanwhile. */
  private async send(table: string): Promise<void> {
    this.underWay.add(table);
    try {
      for (;;) {
        const queue = this.waiting.get(table);
        if (!queue || queue.length === 0) {
          this.waiting.delete(table);
          return;
        }
        const rows = queue.splice(0, MAX_ROWS);
        await this.commit(rows);
      }
    } finally {
      this.underWay.delete(table);
    }
  }

  private async commit(rows: Waiting[]): Promise<void> {
    const statement = rows.length === 1 ? singleInsert(rows[0]!.insert) : manyInsert(rows.map((r) => r.insert));
    try {
      await this.run(statement.sql, statement.params);
      for (const row of rows) row.resolve();
    } catch (error) {
      if (rows.length === 1 || !ROW_FAULT.test(String((error as { code?: unknown }).code ?? ''))) {
        for (const row of rows) row.reject(error);
        return;
      }
      // Nothing of the refused statement was written: each row alone, to fail only the one at fault.
      await Promise.all(
        rows.map(async (row) => {
          const alone = singleInsert(row.insert);
          try {
            await this.run(alone.sql, alone.params);
            row.resolve();
          } catch (rowError) {
            row.reject(rowError);
          }
        }),
      );
    }
  }
}

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from './sqlite.js';
import type { Sql, SqlChanges } from './sql.js';
import type Database from 'better-sqlite3';

/** The transaction an async context runs in; `open` turns false when it ends, for work it left running. */
interface Scope {
  open: boolean;
}

/**
 * `Sql` over one better-sqlite3 connection. Statements are prepared once per text. A transaction
 * spans awaits, so while one is open a statement from outside it waits for its end rather than
 * joining it; statements from inside (found through AsyncLocalStorage) run at once. The storage is
 * disabled again when the transaction ends: on Node 20 an enabled AsyncLocalStorage makes every
 * promise of the process pay for async hooks (about 0.1 µs per await, measured), the data API's
 * requests too, which never use it.
 */
export class SqliteSql implements Sql {
  readonly kind = 'sqlite';
  private readonly statements = new Map<string, Database.Statement>();
  private readonly scope = new AsyncLocalStorage<Scope>();
  /** Settles when the open transaction ends; undefined when none is open. */
  private current: Promise<void> | undefined;

  constructor(readonly db: Db) {}

  async get<T>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    // Checked again after each wait, in the same turn as the statement runs: no transaction can begin in between.
    while (this.current && !this.inside()) await this.current;
    return this.prepare(sql).get(...params) as T | undefined;
  }

  async all<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    while (this.current && !this.inside()) await this.current;
    return this.prepare(sql).all(...params) as T[];
  }

  async run(sql: string, ...params: unknown[]): Promise<SqlChanges> {
    while (this.current && !this.inside()) await this.current;
    return { changes: this.prepare(sql).run(...params).changes };
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inside()) return fn();
    // The check and the claim happen in one turn, so two waiters woken together cannot both begin.
    while (this.current) await this.current;
    let end!: () => void;
    this.current = new Promise((resolve) => (end = resolve));
    const scope: Scope = { open: true };
    try {
      this.prepare('BEGIN IMMEDIATE').run();
      try {
        const result = await this.scope.run(scope, fn);
        this.prepare('COMMIT').run();
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.prepare('ROLLBACK').run();
        throw error;
      }
    } finally {
      scope.open = false;
      this.current = undefined;
      // One transaction at a time here, so none needs the storage any more.
      this.scope.disable();
      end();
    }
  }

  async close(): Promise<void> {
    while (this.current) await this.current;
    if (this.db.open) this.db.close();
  }

  private inside(): boolean {
    return this.scope.getStore()?.open === true;
  }

  private prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/**
 * The platform store's SQL seam: the same statements run on SQLite (`platform.db`) and on
 * PostgreSQL (`BACKYARD_DATABASE_URL`). Statements use `?` placeholders and the SQL both engines
 * share; where they differ, a caller asks `kind`.
 */

/** Rows changed by a write. */
export interface SqlChanges {
  changes: number;
}

/** Runs statements: on their own (each its own transaction), or inside `Sql.transaction`. */
export interface SqlRunner {
  /** The first row, or undefined. */
  get<T>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** Every row. */
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** A write; answers how many rows it changed. */
  run(sql: string, ...params: unknown[]): Promise<SqlChanges>;
}

/**
 * A database for the platform's own state. Statements issued from inside `transaction`'s callback
 * (its whole async context) run in that transaction; statements from elsewhere wait for it to end
 * (SQLite) or run on another connection (PostgreSQL).
 */
export interface Sql extends SqlRunner {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one transaction that holds the store's write lock from its start (SQLite's
   * `BEGIN IMMEDIATE`; a transaction-scoped advisory lock on PostgreSQL), so a read-then-write in it
   * sees every other write committed. Commits when `fn` resolves, rolls back when it throws (and
   * rethrows). A call from inside a transaction joins it.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /** Closes the database; statements after it fail. */
  close(): Promise<void>;
}

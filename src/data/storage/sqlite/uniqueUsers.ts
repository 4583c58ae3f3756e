import type { Db } from '../../../shared/sqlite.js';
import { fieldPath } from '../../fieldPath.js';
import { classTable, indexExpr, quoteIdent, runStatement } from './layout.js';
import { authDataIndex, authDataProviders, EMAIL_INDEX, uniqueViolation, USERNAME_INDEX, warnDuplicates } from '../uniqueUsers.js';

/**
 * The unique indexes of `_User` in an app's `data.db` (storage/uniqueUsers.ts says what and why).
 * Names and paths reach their SQL as every other's do (layout.ts: `quoteIdent`, `indexExpr` of a
 * checked FieldPath); a provider name has also passed `authDataProviders` (letters, digits, `_`). The username and email expressions are those of the
 * case-insensitive lookups (`lower(json_extract(data, '$."username"'))`, layout.ts and the dialect's
 * `lowerEquals`); SQLite's lower() folds ASCII letters only, as that lookup does.
 */

/** The table of `_User` (layout.ts, classTable). */
const TABLE = classTable('_User');

const USER_INDEXES = [
  { field: 'username', sql: `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(USERNAME_INDEX)} ON ${TABLE} (lower(${indexExpr(fieldPath(['username']))}))` },
  { field: 'email', sql: `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(EMAIL_INDEX)} ON ${TABLE} (lower(${indexExpr(fieldPath(['email']))}))` },
] as const;

const isUniqueFailure = (error: unknown) => (error as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE';

/**
 * Parse's answer (202, 203, 208) for a write one of these indexes refused, or the error itself.
 * better-sqlite3 reports `SQLITE_CONSTRAINT_UNIQUE` with "UNIQUE constraint failed: index '<name>'".
 */
export function uniqueFault(error: unknown): unknown {
  if (!isUniqueFailure(error)) return error;
  const index = /index '([^']+)'/.exec((error as Error).message)?.[1];
  return uniqueViolation(index) ?? error;
}

/** The unique indexes of one `data.db`'s `_User` table. */
export class SqliteUniqueUsers {
  /** Providers whose ids are not unique in the table already: warned about once, not tried again. */
  private readonly duplicated = new Set<string>();

  private readonly indexNamed;

  /**
   * @param db the app's `data.db`.
   * @param file its path, naming the app in a warning.
   */
  constructor(
    private readonly db: Db,
    private readonly file: string,
  ) {
    this.indexNamed = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?`);
  }

  /**
   * Creates a unique index, unless the table holds duplicates of it (a table older than the
   * index): then it warns and answers false. A failed CREATE leaves the transaction as it was.
   */
  private create(sql: string, field: string): boolean {
    try {
      runStatement(this.db, sql);
      return true;
    } catch (error) {
      if (!isUniqueFailure(error)) throw error;
      warnDuplicates(`${TABLE} of ${this.file}`, field);
      return false;
    }
  }

  /** The username and email indexes: with the `_User` table, and at every open for tables made before them. */
  userIndexes(): void {
    for (const { field, sql } of USER_INDEXES) this.create(sql, field);
  }

  /**
   * Before a `_User` row is written, in the write's transaction: each provider of its `authData`
   * gets its unique index if it has none (a lookup in sqlite_master when it has), so that the first
   * write of a provider's id is already checked by the database.
   * @throws ParseError 252 for a provider name that could not be written into SQL (authDataProviders).
   */
  beforeWrite(authData: unknown): void {
    for (const provider of authDataProviders(authData)) {
      if (this.duplicated.has(provider)) continue;
      const name = authDataIndex(provider);
      if (this.indexNamed.get(name)) continue;
      const sql = `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${TABLE} (${indexExpr(fieldPath(['authData', provider, 'id']))})`;
      if (!this.create(sql, `authData.${provider}.id`)) this.duplicated.add(provider);
    }
  }
}

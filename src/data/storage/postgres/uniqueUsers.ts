import { fieldPath } from '../../fieldPath.js';
import type { Run } from './database.js';
import { bytewise, quoteIdent, textAt } from './layout.js';
import { authDataIndex, authDataProviders, EMAIL_INDEX, uniqueViolation, USERNAME_INDEX, warnDuplicates } from '../uniqueUsers.js';

/**
 * The unique indexes of `_User` in an app's PostgreSQL schema (storage/uniqueUsers.ts says what and
 * why). Names and paths reach their SQL as every other's do (layout.ts: `quoteIdent`, `textAt` of a
 * checked FieldPath); a provider name has also passed `authDataProviders` (letters, digits, `_`). The username and email expressions are those of the case-insensitive lookups
 * (transaction.ts, the dialect's `lowerEquals`): under `COLLATE "C"`, lower() folds ASCII letters
 * only, as that lookup does.
 *
 * Every statement here runs under the app's advisory lock (a transaction's `run` takes it first),
 * so two processes never create one index at once. A table that holds duplicates is found by a
 * query before the CREATE, since a failed statement would abort the whole transaction.
 */

const USER_INDEXES = [
  { name: USERNAME_INDEX, field: 'username', expression: `lower(${bytewise(textAt('', fieldPath(['username'])))})` },
  { name: EMAIL_INDEX, field: 'email', expression: `lower(${bytewise(textAt('', fieldPath(['email'])))})` },
] as const;

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/** Parse's answer (202, 203, 208) when PostgreSQL refused a write for one of these indexes (its `constraint` names the index), else undefined. */
export function uniqueFault(error: unknown): Error | undefined {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === UNIQUE_VIOLATION && typeof constraint === 'string' ? uniqueViolation(constraint) : undefined;
}

/** `"<schema>"."<name>"`. */
const qualify = (schema: string, name: string) => `${quoteIdent(schema)}.${quoteIdent(name)}`;

/**
 * Creates the unique index `name` over `expression` of the `_User` table unless it exists, or,
 * when the table holds duplicates of it, warns and leaves it (answering false).
 */
async function ensureIndex(run: Run, schema: string, name: string, expression: string, field: string): Promise<boolean> {
  const table = qualify(schema, 'cls__User');
  const present = await run(`SELECT to_regclass(?::text) IS NOT NULL AS present`, [qualify(schema, name)]);
  if (present.rows[0]?.present) return true;
  const duplicate = await run(`SELECT 1 FROM ${table} WHERE ${expression} IS NOT NULL GROUP BY ${expression} HAVING count(*) > 1 LIMIT 1`);
  if ((duplicate.rowCount ?? 0) > 0) {
    warnDuplicates(table, field);
    return false;
  }
  await run(`CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${table} (${expression})`);
  return true;
}

/**
 * One app's unique indexes of `_User`, and which providers' indexes this process knows to be
 * committed (so that a user write with `authData` costs no catalog query once they are).
 */
export class PostgresUniqueUsers {
  private readonly known = new Set<string>();

  /** @param schema the app's schema name (layout.ts, appSchema). */
  constructor(private readonly schema: string) {}

  /**
   * The username and email indexes: with the `_User` table, and at each open for tables made before them.
   * @param run a transaction's run, holding (or taking) the app's lock.
   */
  async userIndexes(run: Run): Promise<void> {
    for (const { name, field, expression } of USER_INDEXES) await ensureIndex(run, this.schema, name, expression, field);
  }

  /**
   * Before a `_User` row is written, in the write's transaction: each provider of its `authData`
   * gets its unique index unless this process knows it exists, so that the first write of a
   * provider's id is already checked by the database.
   * @param made the providers this transaction saw to; `committed` makes them known once it commits.
   * @throws ParseError 252 for a provider name that could not be written into SQL (authDataProviders).
   */
  async beforeWrite(run: Run, authData: unknown, made: Set<string>): Promise<void> {
    for (const provider of authDataProviders(authData)) {
      if (this.known.has(provider) || made.has(provider)) continue;
      const expression = bytewise(textAt('', fieldPath(['authData', provider, 'id'])));
      await ensureIndex(run, this.schema, authDataIndex(provider), expression, `authData.${provider}.id`);
      // A provider with duplicates is not tried again either, until the schema is reloaded.
      made.add(provider);
    }
  }

  /** A transaction that saw to `made` committed. */
  committed(made: ReadonlySet<string>): void {
    for (const provider of made) this.known.add(provider);
  }

  /** The schema changed (another process may have dropped and made `_User` again): look again. */
  forget(): void {
    this.known.clear();
  }
}

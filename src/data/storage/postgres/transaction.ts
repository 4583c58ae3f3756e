import { ParseCode, ParseError } from '../../errors.js';
import { DEFAULT_FIELDS, type FieldType } from '../../types.js';
import { describeType } from '../../values.js';
import type { StorageTransaction, StoredClass, StoredRow } from '../adapter.js';
import type { SchemaCache } from '../schemaCache.js';
import type { Run } from './database.js';
import type { RowInsert } from './insertBatches.js';
import { extendPath, fieldPath, type FieldPath } from '../../fieldPath.js';
import { bytewise, fieldColumnDdl, fieldColumnKind, fieldColumnName, isColumnPath, jsonAt, pathLiteral, PUBLIC_READ, PUBLIC_READ_DDL, quoteIdent, textAt } from './layout.js';
import { PostgresReads, type AppSchema } from './reads.js';
import type { PostgresUniqueUsers } from './uniqueUsers.js';

/** The columns of an object's row (layout.ts), in the order `insert` gives their values. */
const ROW_COLUMNS = ['"objectId"', '"createdAt"', '"updatedAt"', 'data', 'acl'];
const ROW_TYPES = ['text', 'text', 'text', 'jsonb', 'jsonb'];

/** What a transaction needs of its adapter besides what reads need: the cache it keeps current. */
export interface TransactionOwner extends AppSchema {
  readonly cache: SchemaCache;
  /** The `_SCHEMA_VERSION` the cache was read at. */
  readonly version: number;
  /** Reloads the cache unless it was read at `version`. */
  followVersion(version: number, run: Run): Promise<void>;
  /** Counts a transaction taking (`true`) or releasing the app's lock; a reload from the pool while one holds it leaves the cache alone. */
  holdLock(held: boolean): void;
  /** `_User`'s unique indexes (uniqueUsers.ts). */
  readonly uniqueUsers: PostgresUniqueUsers;
}

/**
 * The statements making the index `name` of a class over `keys`: first the typed columns (layout.ts)
 * of its top-level String and Number fields, then the index over those columns (and over the
 * expression of `indexExpression` for any other key), carrying `_publicRead`.
 * @param table the class table, quoted and qualified.
 * @param index the index's name, quoted (in the table's schema).
 */
export function fieldIndexDdl(table: string, index: string, keys: Record<string, 1 | -1>, fields: Readonly<Record<string, FieldType>>): string[] {
  const ddl: string[] = [];
  const columns = Object.entries(keys).map(([field, dir]) => {
    const path = fieldPath(field.split('.'));
    const kind = path.length === 1 && !isColumnPath(path) ? fieldColumnKind(fields[field]?.type) : undefined;
    if (kind) ddl.push(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${fieldColumnDdl(field, kind)}`);
    const expr = kind ? quoteIdent(fieldColumnName(field, kind)) : indexExpression(path, path.length === 1 ? fields[field]?.type : undefined);
    // Missing values sort first ascending (dialect.ts, orderTerm): so the index reads in either direction.
    return `${expr}${dir === -1 ? ' DESC NULLS LAST' : ' NULLS FIRST'}`;
  });
  ddl.push(`CREATE INDEX IF NOT EXISTS ${index} ON ${table} (${columns.join(', ')}) INCLUDE (${PUBLIC_READ})`);
  return ddl;
}

/**
 * The index expression of a field path, the same expression the dialect compares it with (a
 * String, Date, File or Pointer as text `COLLATE "C"` or text, a Number or Boolean as jsonb), so
 * that the planner uses the index.
 */
export function indexExpression(path: FieldPath, type: FieldType['type'] | undefined): string {
  if (isColumnPath(path)) return quoteIdent(path[0]!);
  if (path.length === 1) {
    if (type === 'Date') return bytewise(textAt('', extendPath(path, ['iso'])));
    if (type === 'File') return bytewise(textAt('', extendPath(path, ['name'])));
    if (type === 'Pointer') return textAt('', extendPath(path, ['objectId']));
    if (type === 'Number' || type === 'Boolean' || type === 'Object' || type === 'Array' || type === 'GeoPoint' || type === 'Polygon') return jsonAt('', path);
  }
  return bytewise(textAt('', path));
}


/**
 * A transaction of one app's schema, on one connection. It takes the app's write lock (and brings
 * the schema cache up to date under it) before its first statement other than an insert, and before
 * a write that reads the cache (a read, an update, a schema change...), so that a
 * read-modify-write sees every write committed before it, while transactions that only insert
 * objects (creates) run side by side and share PostgreSQL's group commit.
 */
export class PostgresTransaction extends PostgresReads implements StorageTransaction {
  ended = false;
  protected override readonly underLock = true;
  /** Whether it took the app's lock (which it holds until it ends). */
  holdsLock = false;
  /** Whether it changed the schema (what a rollback restores, and what a commit announces). */
  schemaChanged = false;
  /** The cache and its version when the lock was taken, restored by a rollback. */
  before: { view: ReadonlyMap<string, Readonly<StoredClass>>; version: number } | undefined;
  private locking: Promise<void> | undefined;
  /** Providers whose unique `authData` index this transaction saw to (PostgresUniqueUsers.committed). */
  readonly authDataIndexes = new Set<string>();
  /** Whether it added or dropped a typed field column (the adapter reads its columns again after the commit). */
  columnsChanged = false;
  /** Runs a statement without taking the lock (an insert). */
  private readonly runUnlocked: Run;

  constructor(
    protected override readonly owner: TransactionOwner,
    run: Run,
    private readonly defer: (insert: RowInsert) => void,
  ) {
    const live: Run = (sql, params) => {
      if (this.ended) return Promise.reject(new Error('This storage transaction has ended'));
      return run(sql, params);
    };
    super(
      owner,
      async (sql, params) => {
        await this.lock(live);
        return live(sql, params);
      },
    );
    this.runUnlocked = live;
    this.initialClasses = owner.cache.view();
  }

  /** The schema cache as the transaction began (a reload replaces the map, so this one stays). */
  private readonly initialClasses: ReadonlyMap<string, Readonly<StoredClass>>;

  /**
   * The class to save, given one the engine built from the cache as it was when the transaction
   * began. When taking the lock showed that another process changed the class since (its
   * announcement not yet here), its changes are kept: fields it added stay, and a field both added
   * with different types is refused, as a write of the other type would have been.
   * @throws ParseError 111 "schema mismatch for <class>.<field>; expected <type> but got <type>".
   */
  private reconcile(cls: StoredClass): StoredClass {
    const fresh = this.owner.getClass(cls.className);
    const seen = this.initialClasses.get(cls.className);
    if (!fresh || fresh === seen) return cls;
    const fields = { ...cls.fields };
    for (const [name, type] of Object.entries(fresh.fields)) {
      if (seen && name in seen.fields) continue;
      const mine = fields[name];
      if (!mine) fields[name] = type;
      else if (mine.type !== type.type || mine.targetClass !== type.targetClass) {
        throw new ParseError(ParseCode.INCORRECT_TYPE, `schema mismatch for ${cls.className}.${name}; expected ${describeType(type)} but got ${describeType(mine)}`);
      }
    }
    return { ...cls, fields };
  }

  /** Under the lock the cache is current: a class it does not know does not exist. */
  protected override async missing(className: string): Promise<boolean> {
    await this.lock(this.runUnlocked);
    return !this.owner.getClass(className);
  }

  /** Takes the app's lock once, bringing the schema cache up to date while holding it. */
  private lock(run: Run): Promise<void> {
    this.locking ??= (async () => {
      const locked = await run(`SELECT pg_advisory_xact_lock(hashtext(?)), (SELECT v FROM ${this.owner.qualified('_SCHEMA_VERSION')}) AS v`, [this.owner.schema]);
      this.holdsLock = true;
      this.owner.holdLock(true);
      await this.owner.followVersion(Number(locked.rows[0]?.v), run);
      this.before = { view: this.owner.cache.view(), version: this.owner.version };
    })();
    return this.locking;
  }

  private async exec(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.run(sql, params)).rowCount ?? 0;
  }

  private relationDdl(className: string, field: string): string[] {
    const table = this.dialect.relationTable(className, field);
    return [
      `CREATE TABLE IF NOT EXISTS ${table} ("owningId" text COLLATE "C" NOT NULL, "relatedId" text COLLATE "C" NOT NULL, PRIMARY KEY ("owningId", "relatedId"))`,
      `CREATE INDEX IF NOT EXISTS ${quoteIdent(`_Join:${field}:${className}_related`)} ON ${table} ("relatedId")`,
    ];
  }

  async saveClass(given: StoredClass): Promise<void> {
    await this.lock(this.runUnlocked);
    const cls = this.reconcile(given);
    const { className, ...rest } = cls;
    await this.exec(
      `INSERT INTO ${this.owner.qualified('_SCHEMA')} ("className", schema) VALUES (?, ?::jsonb) ON CONFLICT ("className") DO UPDATE SET schema = excluded.schema`,
      [className, JSON.stringify(rest)],
    );
    if (!this.owner.getClass(className)) {
      const table = this.table(className);
      await this.exec(
        `CREATE TABLE IF NOT EXISTS ${table} ("objectId" text COLLATE "C" PRIMARY KEY, "createdAt" text COLLATE "C" NOT NULL, "updatedAt" text COLLATE "C" NOT NULL, data jsonb NOT NULL, acl jsonb, ${PUBLIC_READ_DDL})`,
      );
      await this.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls_${className}_createdAt`)} ON ${table} ("createdAt")`);
      if (className === '_User') {
        for (const field of ['username', 'email']) {
          await this.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls__User_${field}_lower`)} ON ${table} (lower(${bytewise(textAt('', fieldPath([field])))}))`);
        }
        await this.owner.uniqueUsers.userIndexes(this.run);
      }
    }
    for (const [field, type] of Object.entries(cls.fields)) {
      if (type.type === 'Relation') for (const ddl of this.relationDdl(className, field)) await this.exec(ddl);
    }
    this.schemaChanged = true;
    this.owner.cache.set(cls);
  }

  async dropClass(className: string): Promise<void> {
    await this.lock(this.runUnlocked);
    const cls = this.owner.getClass(className);
    if (!cls) return;
    for (const [field, type] of Object.entries(cls.fields)) {
      if (type.type === 'Relation') await this.exec(`DROP TABLE IF EXISTS ${this.dialect.relationTable(className, field)}`);
    }
    await this.exec(`DROP TABLE IF EXISTS ${this.table(className)}`);
    await this.exec(`DELETE FROM ${this.owner.qualified('_SCHEMA')} WHERE "className" = ?`, [className]);
    this.schemaChanged = true;
    this.owner.cache.delete(className);
  }

  private indexName = (className: string, name: string) => quoteIdent(`idx_${className}_${name}`);

  async createIndex(className: string, name: string, keys: Record<string, 1 | -1>): Promise<void> {
    await this.lock(this.runUnlocked);
    const ddl = fieldIndexDdl(this.table(className), this.indexName(className, name), keys, this.owner.fields(className) ?? DEFAULT_FIELDS);
    for (const statement of ddl) await this.exec(statement);
    if (ddl.length > 1) this.columnsChanged = true;
  }

  async dropIndex(className: string, name: string): Promise<void> {
    await this.exec(`DROP INDEX IF EXISTS ${quoteIdent(this.owner.schema)}.${this.indexName(className, name)}`);
  }

  async removeField(className: string, field: string, type: FieldType): Promise<void> {
    if (type.type === 'Relation') await this.exec(`DROP TABLE IF EXISTS ${this.dialect.relationTable(className, field)}`);
    else {
      const path = fieldPath([field]);
      await this.exec(`UPDATE ${this.table(className)} SET data = data #- ${pathLiteral(path)} WHERE ${jsonAt('', path)} IS NOT NULL`);
      // Its typed column (and the indexes over it) go: a field of that name made again may have another type.
      const kind = fieldColumnKind(type.type);
      if (kind) {
        await this.exec(`ALTER TABLE ${this.table(className)} DROP COLUMN IF EXISTS ${quoteIdent(fieldColumnName(field, kind))}`);
        this.columnsChanged = true;
      }
    }
  }

  /** Sent with the transaction's next statement, or alone at its end (PostgresDatabase.transaction). */
  async insert(className: string, row: StoredRow): Promise<void> {
    if (this.ended) throw new Error('This storage transaction has ended');
    if (className === '_User') await this.owner.uniqueUsers.beforeWrite(this.run, row.data.authData, this.authDataIndexes);
    this.defer({
      table: this.table(className),
      columns: ROW_COLUMNS,
      types: ROW_TYPES,
      values: [row.objectId, row.createdAt, row.updatedAt, JSON.stringify(row.data), row.acl === null ? null : JSON.stringify(row.acl)],
    });
  }

  async replace(className: string, row: StoredRow): Promise<boolean> {
    if (className === '_User') await this.owner.uniqueUsers.beforeWrite(this.run, row.data.authData, this.authDataIndexes);
    const changed = await this.exec(`UPDATE ${this.table(className)} SET "updatedAt" = ?, data = ?::jsonb, acl = ?::jsonb WHERE "objectId" = ?`, [
      row.updatedAt,
      JSON.stringify(row.data),
      row.acl === null ? null : JSON.stringify(row.acl),
      row.objectId,
    ]);
    return changed > 0;
  }

  async delete(className: string, objectId: string): Promise<boolean> {
    await this.lock(this.runUnlocked);
    const deleted = (await this.exec(`DELETE FROM ${this.table(className)} WHERE "objectId" = ?`, [objectId])) > 0;
    const cls = this.owner.getClass(className);
    if (deleted && cls) {
      for (const [field, type] of Object.entries(cls.fields)) {
        if (type.type === 'Relation') await this.exec(`DELETE FROM ${this.dialect.relationTable(className, field)} WHERE "owningId" = ?`, [objectId]);
      }
    }
    return deleted;
  }

  async deleteAll(className: string): Promise<void> {
    await this.lock(this.runUnlocked);
    await this.exec(`DELETE FROM ${this.table(className)}`);
    for (const [field, type] of Object.entries(this.owner.getClass(className)?.fields ?? {})) {
      if (type.type === 'Relation') await this.exec(`DELETE FROM ${this.dialect.relationTable(className, field)}`);
    }
  }

  async addRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): Promise<void> {
    if (relatedIds.length === 0) return;
    await this.exec(
      `INSERT INTO ${this.dialect.relationTable(ownerClass, field)} ("owningId", "relatedId") SELECT ?, unnest(?::text[]) ON CONFLICT DO NOTHING`,
      [owningId, [...relatedIds]],
    );
  }

  async removeRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): Promise<void> {
    if (relatedIds.length === 0) return;
    await this.exec(`DELETE FROM ${this.dialect.relationTable(ownerClass, field)} WHERE "owningId" = ? AND "relatedId" = ANY(?::text[])`, [owningId, [...relatedIds]]);
  }

  async putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): Promise<void> {
    const table = this.owner.qualified('_CONFIG');
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined) await this.exec(`DELETE FROM ${table} WHERE key = ?`, [key]);
      else {
        await this.exec(
          `INSERT INTO ${table} (key, value, "masterKeyOnly") VALUES (?, ?::jsonb, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, "masterKeyOnly" = excluded."masterKeyOnly"`,
          [key, JSON.stringify(value), masterKeyOnly[key] === true],
        );
      }
    }
  }
}

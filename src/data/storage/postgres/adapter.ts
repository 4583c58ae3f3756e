import type { GroupPlan } from '../../aggregate/groupPlan.js';
import { ParseCode, ParseError } from '../../errors.js';
import { compileOrder, compileWhere, nearSphereOrder, type CompileOptions } from '../../query/compile.js';
import type { Dialect, SqlFragment } from '../../query/dialect.js';
import { DEFAULT_FIELDS, type FieldType, type SchemaLookup } from '../../types.js';
import { describeType } from '../../values.js';
import type { ConfigEntry, FindOptions, StorageAdapter, StorageReads, StorageTransaction, StoredClass, StoredRow } from '../adapter.js';
import { EVERYTHING, SCHEMA_CHANNEL, type PostgresDatabase, type Run } from './database.js';
import { postgresDialect } from './dialect.js';
import { bytewise, isColumnPath, jsonAt, pathLiteral, quoteIdent, textAt } from './layout.js';

const ROW_COLUMNS = 't."objectId", t."createdAt", t."updatedAt", t.data, t.acl';

/** SQLite's own limit guides ours: keep IN lists bounded. */
const MAX_IN = 10_000;

interface RowRecord {
  objectId: string;
  createdAt: string;
  updatedAt: string;
  data: Record<string, unknown>;
  acl: StoredRow['acl'];
}

const toRow = (r: RowRecord): StoredRow => ({ objectId: r.objectId, createdAt: r.createdAt, updatedAt: r.updatedAt, data: r.data, acl: r.acl });

/** Schema entries are shared read-only; whoever changes one works on a copy (`structuredClone`). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** PostgreSQL's invalid_regular_expression: a `$regex` JavaScript accepts and PostgreSQL's engine does not. */
const INVALID_REGEX = '2201B';

/** Runs SQL, answering a pattern PostgreSQL refuses as Parse's 102 rather than a 500. */
const guarded =
  (run: Run): Run =>
  async (sql, params) => {
    try {
      return await run(sql, params);
    } catch (error) {
      if ((error as { code?: string }).code === INVALID_REGEX) {
        throw new ParseError(ParseCode.INVALID_QUERY, `Invalid $regex for this database: ${(error as Error).message}`);
      }
      throw error;
    }
  };

/**
 * The index expression of a field path, the same expression the dialect compares it with (a
 * String, Date, File or Pointer as text `COLLATE "C"` or text, a Number or Boolean as jsonb), so
 * that the planner uses the index.
 */
export function indexExpression(path: readonly string[], type: FieldType['type'] | undefined): string {
  if (isColumnPath(path)) return quoteIdent(path[0]!);
  if (path.length === 1) {
    if (type === 'Date') return bytewise(textAt('', [...path, 'iso']));
    if (type === 'File') return bytewise(textAt('', [...path, 'name']));
    if (type === 'Pointer') return textAt('', [...path, 'objectId']);
    if (type === 'Number' || type === 'Boolean' || type === 'Object' || type === 'Array' || type === 'GeoPoint' || type === 'Polygon') return jsonAt('', path);
  }
  return bytewise(textAt('', path));
}

/** Reads of one app's schema, on the pool or on a transaction's connection. */
class PostgresReads implements StorageReads {
  constructor(
    protected readonly owner: PostgresAdapter,
    protected readonly run: Run,
  ) {}

  /**
   * Whether the class is unknown, after making sure the cache is not merely behind another
   * process's change (one small query, only when the cache does not know the class).
   */
  protected async missing(className: string): Promise<boolean> {
    if (this.owner.getClass(className)) return false;
    await this.owner.catchUp(this.run);
    return !this.owner.getClass(className);
  }

  protected get dialect(): Dialect {
    return this.owner.dialect;
  }

  protected table(className: string): string {
    return this.dialect.classTable(className);
  }

  /** The rows of a class the principals may read: public rows and rows whose ACL grants one of them read. */
  private readable(alias: string, principals: readonly string[] | undefined): SqlFragment | undefined {
    if (principals === undefined) return undefined;
    const grants = principals.map(() => `jsonb_extract_path_text(${alias}.acl, ?::text, 'read') = 'true'`);
    return { sql: `(${alias}.acl IS NULL OR ${grants.join(' OR ')})`, params: [...principals] };
  }

  private compileOptions({ principals, access }: Pick<FindOptions, 'principals' | 'access'>): CompileOptions {
    return { dialect: this.dialect, schema: this.owner, readable: (_cls, alias) => this.readable(alias, principals), access };
  }

  private whereClause(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): SqlFragment {
    const compiled = compileWhere(className, 't', options.where ?? {}, this.compileOptions(options));
    const acl = this.readable('t', options.principals);
    return acl ? { sql: `(${compiled.sql}) AND ${acl.sql}`, params: [...compiled.params, ...acl.params] } : compiled;
  }

  async get(className: string, objectId: string): Promise<StoredRow | undefined> {
    if (await this.missing(className)) return undefined;
    const result = await this.run(`SELECT ${ROW_COLUMNS} FROM ${this.table(className)} AS t WHERE t."objectId" = ?`, [objectId]);
    const row = result.rows[0] as RowRecord | undefined;
    return row && toRow(row);
  }

  async find(className: string, options: FindOptions): Promise<StoredRow[]> {
    const where = this.whereClause(className, options);
    const compileOptions = this.compileOptions(options);
    let orderSql = options.order ? compileOrder(className, 't', options.order, compileOptions) : '';
    if (await this.missing(className)) return [];
    const params = [...where.params];
    if (!orderSql) {
      const near = nearSphereOrder(className, 't', options.where ?? {}, compileOptions);
      if (near) {
        orderSql = `${near.sql} ASC`;
        params.push(...near.params);
      }
    }
    const sql = `SELECT ${ROW_COLUMNS} FROM ${this.table(className)} AS t WHERE ${where.sql}${orderSql ? ` ORDER BY ${orderSql}` : ''} LIMIT ? OFFSET ?`;
    const result = await this.run(sql, [...params, options.limit ?? 100, options.skip ?? 0]);
    return (result.rows as RowRecord[]).map(toRow);
  }

  async count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): Promise<number> {
    const where = this.whereClause(className, options);
    if (await this.missing(className)) return 0;
    const result = await this.run(`SELECT count(*)::int AS n FROM ${this.table(className)} AS t WHERE ${where.sql}`, where.params);
    return (result.rows[0] as { n: number }).n;
  }

  async relatedIds(ownerClass: string, field: string, owningId: string): Promise<string[]> {
    if (this.owner.getClass(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    const result = await this.run(`SELECT "relatedId" FROM ${this.dialect.relationTable(ownerClass, field)} WHERE "owningId" = ?`, [owningId]);
    return (result.rows as Array<{ relatedId: string }>).map((r) => r.relatedId);
  }

  async owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): Promise<string[]> {
    if (relatedIds.length === 0 || this.owner.getClass(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    const result = await this.run(`SELECT DISTINCT "owningId" FROM ${this.dialect.relationTable(ownerClass, field)} WHERE "relatedId" = ANY(?::text[])`, [
      relatedIds.slice(0, MAX_IN),
    ]);
    return (result.rows as Array<{ owningId: string }>).map((r) => r.owningId);
  }

  async getConfig(): Promise<ConfigEntry[]> {
    const result = await this.run(`SELECT key, value, "masterKeyOnly" FROM ${this.owner.qualified('_CONFIG')} ORDER BY key COLLATE "C"`);
    return (result.rows as Array<{ key: string; value: unknown; masterKeyOnly: boolean }>).map((r) => ({ key: r.key, value: r.value, masterKeyOnly: r.masterKeyOnly }));
  }

  /** StorageReads.group in SQL: GROUP BY the key's text, aggregates over numeric values only (exact sums). */
  async group(className: string, where: unknown, plan: GroupPlan): Promise<Array<Record<string, unknown>>> {
    const compiled = this.whereClause(className, { where });
    if (await this.missing(className)) return [];
    const numeric = (field: string) => `(CASE WHEN jsonb_typeof(${jsonAt('t', [field])}) = 'number' THEN (${jsonAt('t', [field])})::numeric END)`;
    const columns = plan.outputs.map((o) => {
      switch (o.op) {
        case 'count':
          return `(count(*) * ${o.times})::float8`;
        case 'sum':
          return `coalesce(sum(${numeric(o.field)}), 0)::float8`;
        default:
          return `${o.op}(${numeric(o.field)})::float8`;
      }
    });
    const key = plan.key === undefined ? 'NULL::text' : textAt('t', [plan.key]);
    const sql = `SELECT ${[key, ...columns].map((c, i) => `${c} AS c${i}`).join(', ')} FROM ${this.table(className)} AS t WHERE ${compiled.sql} GROUP BY 1 ORDER BY min(t."createdAt" || t."objectId")`;
    const result = await this.run(sql, compiled.params);
    return (result.rows as Array<Record<string, unknown>>).map((row) => {
      const doc: Record<string, unknown> = { objectId: row.c0 === '' ? null : (row.c0 ?? null) };
      plan.outputs.forEach((o, i) => (doc[o.name] = row[`c${i + 1}`] ?? null));
      return doc;
    });
  }
}

/**
 * A transaction of one app's schema, on one connection. It takes the app's write lock before its
 * first statement other than an insert (a read, an update, a schema change...), so that a
 * read-modify-write sees every write committed before it, while transactions that only insert
 * objects (creates) run side by side and share PostgreSQL's group commit.
 */
class PostgresTransaction extends PostgresReads implements StorageTransaction {
  ended = false;
  /** Whether it changed the schema (what a rollback restores, and what a commit announces). */
  schemaChanged = false;
  /** The cache and its version when the lock was taken, restored by a rollback. */
  before: { classes: Map<string, StoredClass>; version: number } | undefined;
  private locking: Promise<void> | undefined;
  /** Runs a statement without taking the lock (an insert). */
  private readonly runUnlocked: Run;

  constructor(
    owner: PostgresAdapter,
    run: Run,
    private readonly defer: (sql: string, params?: readonly unknown[]) => void,
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
    this.initialClasses = owner.classMap();
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
      await this.owner.followVersion(Number(locked.rows[0]?.v), run);
      this.before = this.owner.snapshot();
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
        `CREATE TABLE IF NOT EXISTS ${table} ("objectId" text COLLATE "C" PRIMARY KEY, "createdAt" text COLLATE "C" NOT NULL, "updatedAt" text COLLATE "C" NOT NULL, data jsonb NOT NULL, acl jsonb)`,
      );
      await this.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls_${className}_createdAt`)} ON ${table} ("createdAt")`);
      if (className === '_User') {
        for (const field of ['username', 'email']) {
          await this.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls__User_${field}_lower`)} ON ${table} (lower(${bytewise(textAt('', [field]))}))`);
        }
      }
    }
    for (const [field, type] of Object.entries(cls.fields)) {
      if (type.type === 'Relation') for (const ddl of this.relationDdl(className, field)) await this.exec(ddl);
    }
    this.schemaChanged = true;
    this.owner.cache(cls);
  }

  async dropClass(className: string): Promise<void> {
    const cls = this.owner.getClass(className);
    if (!cls) return;
    for (const [field, type] of Object.entries(cls.fields)) {
      if (type.type === 'Relation') await this.exec(`DROP TABLE IF EXISTS ${this.dialect.relationTable(className, field)}`);
    }
    await this.exec(`DROP TABLE IF EXISTS ${this.table(className)}`);
    await this.exec(`DELETE FROM ${this.owner.qualified('_SCHEMA')} WHERE "className" = ?`, [className]);
    this.schemaChanged = true;
    this.owner.uncache(className);
  }

  private indexName = (className: string, name: string) => quoteIdent(`idx_${className}_${name}`);

  async createIndex(className: string, name: string, keys: Record<string, 1 | -1>): Promise<void> {
    const fields = this.owner.fields(className) ?? DEFAULT_FIELDS;
    const columns = Object.entries(keys).map(([field, dir]) => {
      const path = field.split('.');
      // Missing values sort first ascending (dialect.ts, orderTerm): so the index reads in either direction.
      return `${indexExpression(path, path.length === 1 ? fields[field]?.type : undefined)}${dir === -1 ? ' DESC NULLS LAST' : ' NULLS FIRST'}`;
    });
    await this.exec(`CREATE INDEX IF NOT EXISTS ${this.indexName(className, name)} ON ${this.table(className)} (${columns.join(', ')})`);
  }

  async dropIndex(_className: string, name: string): Promise<void> {
    await this.exec(`DROP INDEX IF EXISTS ${quoteIdent(this.owner.schema)}.${this.indexName(_className, name)}`);
  }

  async removeField(className: string, field: string, type: FieldType): Promise<void> {
    if (type.type === 'Relation') await this.exec(`DROP TABLE IF EXISTS ${this.dialect.relationTable(className, field)}`);
    else await this.exec(`UPDATE ${this.table(className)} SET data = data #- ${pathLiteral([field])} WHERE ${jsonAt('', [field])} IS NOT NULL`);
  }

  /** Sent with the transaction's next statement, or alone at its end (PostgresDatabase.transaction). */
  async insert(className: string, row: StoredRow): Promise<void> {
    if (this.ended) throw new Error('This storage transaction has ended');
    this.defer(`INSERT INTO ${this.table(className)} ("objectId", "createdAt", "updatedAt", data, acl) VALUES (?, ?, ?, ?::jsonb, ?::jsonb)`, [
      row.objectId,
      row.createdAt,
      row.updatedAt,
      JSON.stringify(row.data),
      row.acl === null ? null : JSON.stringify(row.acl),
    ]);
  }

  async replace(className: string, row: StoredRow): Promise<boolean> {
    const changed = await this.exec(`UPDATE ${this.table(className)} SET "updatedAt" = ?, data = ?::jsonb, acl = ?::jsonb WHERE "objectId" = ?`, [
      row.updatedAt,
      JSON.stringify(row.data),
      row.acl === null ? null : JSON.stringify(row.acl),
      row.objectId,
    ]);
    return changed > 0;
  }

  async delete(className: string, objectId: string): Promise<boolean> {
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

/**
 * The PostgreSQL StorageAdapter (issue 16): one Backend App's objects in the schema `schema` of a
 * shared database (layout.ts), queried through the dialect of dialect.ts. Reads run on the pool.
 * A transaction runs on one connection and first takes the app's advisory lock
 * (`pg_advisory_xact_lock`), so that writes to one app take turns across every Backyard process on
 * the database, as they do on SQLite's one connection: a read-modify-write (a uniqueness check of a
 * username, an increment) sees every write committed before it. Commits are durable when answered
 * (PostgreSQL's `synchronous_commit`), so `durable()` has nothing to wait for.
 *
 * The schema is cached here and read synchronously. A transaction that changes it announces the
 * change (NOTIFY on database.ts's channel) as it commits; every process's adapter of the app
 * reloads its cache when told, so a class or field made through one process is known to the others
 * within one notification's delay.
 */
export class PostgresAdapter implements StorageAdapter, SchemaLookup {
  readonly dialect: Dialect;
  private classes = new Map<string, StoredClass>();
  private merged = new Map<string, Readonly<Record<string, FieldType>>>();
  private readonly reads: PostgresReads;
  private readonly onSchemaChange = (payload: string) => {
    if (payload === this.schema || payload === EVERYTHING) void this.reloadSchema().catch(() => undefined);
  };
  private opening: Promise<void> | undefined;
  private isOpen = false;

  /**
   * Resolves once the schema exists and its cache is loaded; undefined after. A failed opening (the
   * database unreachable) is tried again by the next call, so the app serves once the database is back.
   */
  get opened(): Promise<void> | undefined {
    if (this.isOpen) return undefined;
    this.opening ??= this.open().then(
      () => {
        this.isOpen = true;
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    return this.opening;
  }

  /**
   * @param db the shared database (pool and listener).
   * @param schema the app's schema name (layout.ts, appSchema); created when missing.
   */
  constructor(
    private readonly db: PostgresDatabase,
    readonly schema: string,
  ) {
    this.dialect = postgresDialect(schema);
    this.reads = new PostgresReads(this, guarded(db.run));
    // Started now, so that the first request finds it under way; a failure is reported to that request.
    this.opened?.catch(() => undefined);
  }

  qualified(table: string): string {
    return `${quoteIdent(this.schema)}.${quoteIdent(table)}`;
  }

  private async open(): Promise<void> {
    await this.db.transaction(async (run) => {
      // Two processes opening the same new app would race on CREATE SCHEMA.
      await run('SELECT pg_advisory_xact_lock(hashtext(?))', [this.schema]);
      await run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
      await run(`CREATE TABLE IF NOT EXISTS ${this.qualified('_SCHEMA')} ("className" text COLLATE "C" PRIMARY KEY, schema jsonb NOT NULL)`);
      await run(
        `CREATE TABLE IF NOT EXISTS ${this.qualified('_CONFIG')} (key text COLLATE "C" PRIMARY KEY, value jsonb NOT NULL, "masterKeyOnly" boolean NOT NULL DEFAULT false)`,
      );
      await run(`CREATE TABLE IF NOT EXISTS ${this.qualified('_SCHEMA_VERSION')} (one boolean PRIMARY KEY DEFAULT true CHECK (one), v bigint NOT NULL)`);
      await run(`INSERT INTO ${this.qualified('_SCHEMA_VERSION')} (v) VALUES (0) ON CONFLICT DO NOTHING`);
    });
    await this.db.subscribe(SCHEMA_CHANNEL, this.onSchemaChange);
    await this.reloadSchema();
  }

  /** The `_SCHEMA_VERSION` the cache was read at: every commit that changes the schema increments it. */
  private version = -1;

  private async reloadSchema(run: Run = this.db.run): Promise<void> {
    const version = await this.readVersion(run);
    const result = await run(`SELECT "className", schema FROM ${this.qualified('_SCHEMA')} ORDER BY "className"`);
    const rows = result.rows as Array<{ className: string; schema: Omit<StoredClass, 'className'> }>;
    this.classes = new Map(rows.map((r) => [r.className, deepFreeze({ className: r.className, ...r.schema })]));
    this.merged.clear();
    this.version = version;
  }

  private async readVersion(run: Run): Promise<number> {
    return Number((await run(`SELECT v FROM ${this.qualified('_SCHEMA_VERSION')}`)).rows[0]?.v ?? 0);
  }

  /**
   * Reloads the cache when another process changed the schema since it was read and its
   * announcement has not arrived yet (PostgresReads.missing, a transaction's start).
   */
  async catchUp(run: Run = this.db.run): Promise<void> {
    if (this.opened) await this.opened;
    if ((await this.readVersion(run)) !== this.version) await this.reloadSchema(run);
  }

  /** Puts a class's new entry in the cache (a transaction's saveClass). */
  cache(cls: StoredClass): void {
    this.classes.set(cls.className, deepFreeze(structuredClone(cls)));
    this.merged.delete(cls.className);
  }

  uncache(className: string): void {
    this.classes.delete(className);
    this.merged.delete(className);
  }

  /** Reloads the cache unless it was read at `version` (a transaction holding the lock). */
  async followVersion(version: number, run: Run): Promise<void> {
    if (version !== this.version) await this.reloadSchema(run);
  }

  /** The cache's map itself (replaced, never changed, by a reload). */
  classMap(): ReadonlyMap<string, Readonly<StoredClass>> {
    return this.classes;
  }

  snapshot(): { classes: Map<string, StoredClass>; version: number } {
    return { classes: new Map(this.classes), version: this.version };
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    if (this.opened) await this.opened;
    let tx: PostgresTransaction | undefined;
    try {
      return await this.db.transaction(async (run, defer) => {
        tx = new PostgresTransaction(this, guarded(run), defer);
        const result = await fn(tx);
        if (tx.schemaChanged) {
          const bumped = await run(`UPDATE ${this.qualified('_SCHEMA_VERSION')} SET v = v + 1 RETURNING v`);
          await run('SELECT pg_notify(?, ?)', [SCHEMA_CHANNEL, this.schema]);
          this.version = Number(bumped.rows[0]?.v);
        }
        tx.ended = true;
        return result;
      });
    } catch (error) {
      if (tx) tx.ended = true;
      if (tx?.schemaChanged && tx.before) {
        this.classes = tx.before.classes;
        this.version = tx.before.version;
        this.merged.clear();
      }
      throw error;
    }
  }

  async durable(): Promise<void> {
    // PostgreSQL answered COMMIT once the commit was flushed (synchronous_commit).
  }

  loadSchema(): StoredClass[] {
    return [...this.classes.values()].map((c) => structuredClone(c));
  }

  getClass(className: string): Readonly<StoredClass> | undefined {
    return this.classes.get(className);
  }

  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    let fields = this.merged.get(className);
    if (!fields) {
      const cls = this.classes.get(className);
      if (!cls) return undefined;
      fields = Object.freeze({ ...DEFAULT_FIELDS, ...cls.fields });
      this.merged.set(className, fields);
    }
    return fields;
  }

  /** Reads wait for the opening when a caller did not (the schema cache must be loaded first). */
  private read<T>(fn: () => Promise<T>): Promise<T> {
    return this.opened ? this.opened.then(fn) : fn();
  }
  get: StorageReads['get'] = (className, objectId) => this.read(() => this.reads.get(className, objectId));
  find: StorageReads['find'] = (className, options) => this.read(() => this.reads.find(className, options));
  count: StorageReads['count'] = (className, options) => this.read(() => this.reads.count(className, options));
  relatedIds: StorageReads['relatedIds'] = (ownerClass, field, owningId) => this.read(() => this.reads.relatedIds(ownerClass, field, owningId));
  owningIds: StorageReads['owningIds'] = (ownerClass, field, relatedIds) => this.read(() => this.reads.owningIds(ownerClass, field, relatedIds));
  getConfig: StorageReads['getConfig'] = () => this.read(() => this.reads.getConfig());
  group: StorageReads['group'] = (className, where, plan) => this.read(() => this.reads.group(className, where, plan));

  /** Stops listening for this app's schema changes; the shared pool stays open (database.ts closes it). */
  async close(): Promise<void> {
    this.db.unsubscribe(SCHEMA_CHANNEL, this.onSchemaChange);
  }

  /** Drops the app's schema with everything in it (the app is being deleted). */
  async drop(): Promise<void> {
    await this.close();
    await this.db.run(`DROP SCHEMA IF EXISTS ${quoteIdent(this.schema)} CASCADE`);
  }
}

import type { FieldType } from '../../types.js';
import type { StorageAdapter, StorageReads, StorageTransaction, StoredClass } from '../adapter.js';
import { SqliteDatabase } from './database.js';
import { sqliteDialect } from './dialect.js';
import { SqliteReads } from './reads.js';
import { SqliteTransaction } from './transaction.js';

/** The most transactions one commit carries. */
const MAX_GROUP = 64;

/** The transactions waiting for the commit of the open transaction they ended in. */
interface Group {
  members: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/**
 * The SQLite StorageAdapter: one `data.db` per Backend App, open on this thread (database.ts), read
 * through reads.ts and written through transaction.ts. One connection serves the app, so transactions take
 * turns: one waits for the transaction in progress to end (SQLite has one writer anyway), so code
 * inside a transaction uses its handle (or JoinedStorage), never a new transaction. Reads outside a
 * transaction are answered at once, from the same connection: between the awaits of an open
 * transaction they may see its writes before it commits (docs/parse-differences.md).
 *
 * Transactions that start close together share a commit (group commit). A transaction that ends is
 * not committed at once: its commit waits for the WAL sync in flight to end, or, with none, for the
 * event loop's next check phase (`setImmediate`, after the requests whose bytes arrived with its own
 * have run), and the transactions that start in the meantime run inside it, each as a savepoint. A
 * commit writes each changed page to the WAL, so a group writes a page that several of its inserts
 * changed once (a CPU profile of 16 concurrent creates had COMMIT at 27% of the server's busy time).
 * Each transaction still fails alone: one that throws is rolled back to its savepoint and the others
 * commit. A transaction that changed the schema commits at once, with the group before it. No
 * transaction's promise resolves before its writes are committed; when a commit fails, each
 * transaction of its group is rejected with the error.
 */
export class SqliteAdapter implements StorageAdapter {
  readonly dialect = sqliteDialect;
  private readonly database: SqliteDatabase;
  private readonly reads: SqliteReads;
  /** Whether a transaction is running (its function has not settled). */
  private busy = false;
  private readonly waiting: Array<() => void> = [];
  /** The open transaction's ended members, waiting for its commit; undefined when none is open. */
  private pending: Group | undefined;
  private commitScheduled = false;

  constructor(file: string) {
    this.database = new SqliteDatabase(file);
    this.reads = new SqliteReads(this.database);
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy = true;
    const joining = this.pending !== undefined;
    const tx = new SqliteTransaction(this.database);
    let result: T;
    try {
      if (joining) this.database.join();
      else this.database.begin();
      result = await fn(tx);
      tx.ended = true;
      if (joining) this.database.release();
    } catch (error) {
      tx.ended = true;
      if (!joining) this.database.rollback();
      else if (!this.database.rollbackJoined()) this.failGroup(error);
      if (this.pending) this.scheduleCommit();
      this.endTurn();
      throw error;
    }
    if (this.database.schemaChanged || (this.pending?.members.length ?? 0) + 1 >= MAX_GROUP) {
      this.commit();
      return result;
    }
    const committed = new Promise<void>((resolve, reject) => (this.pending ??= { members: [] }).members.push({ resolve, reject }));
    this.scheduleCommit();
    this.endTurn();
    await committed;
    return result;
  }

  /**
   * Commits the open transaction and settles its group, then hands the turn on.
   * @throws the commit's error, after rolling back and rejecting the group's transactions with it.
   */
  private commit(): void {
    const group = this.pending;
    this.pending = undefined;
    try {
      this.database.commit();
    } catch (error) {
      this.database.rollback();
      for (const member of group?.members ?? []) member.reject(error);
      throw error;
    } finally {
      this.endTurn();
    }
    for (const member of group?.members ?? []) member.resolve();
  }

  /**
   * Commits the open group once the WAL sync in flight has ended, or, with none, in the event loop's
   * next check phase: a commit made during a sync is not on disk before the sync after it either, so
   * waiting for the one in flight costs its members nothing and lets more join. When a transaction is
   * running inside the group then, that one commits or schedules again when it ends.
   */
  private scheduleCommit(): void {
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    const commitNow = () => {
      this.commitScheduled = false;
      if (this.busy || !this.pending) return;
      this.busy = true;
      try {
        this.commit();
      } catch {
        // Each member of the group was rejected with the error.
      }
    };
    const inFlight = this.database.syncInFlight();
    if (!inFlight) return void setImmediate(commitNow);
    // The group's sync starts right after its commit, before its members are answered and ask for it.
    const commitAndSync = () => {
      commitNow();
      this.database.durable().catch(() => undefined);
    };
    inFlight.then(commitAndSync, commitAndSync);
  }

  /** Rejects the members of a group SQLite rolled back as a whole (a full disk, an I/O error). */
  private failGroup(error: unknown): void {
    const group = this.pending;
    this.pending = undefined;
    for (const member of group?.members ?? []) member.reject(error);
  }

  /** Hands the turn to the next waiting transaction, which joins the open group if there is one. */
  private endTurn(): void {
    const next = this.waiting.shift();
    // Handed over while still busy, so that nobody slips in between.
    if (next) next();
    else this.busy = false;
  }

  durable(alone = false): Promise<void> {
    return this.database.durable(alone);
  }

  loadSchema(): StoredClass[] {
    return this.database.classes.load();
  }
  schemaGeneration(): number {
    return this.database.classes.generation;
  }
  getClass(className: string): Readonly<StoredClass> | undefined {
    return this.database.getClass(className);
  }
  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    return this.database.fields(className);
  }

  get: StorageReads['get'] = (className, objectId) => this.reads.get(className, objectId);
  find: StorageReads['find'] = (className, options) => this.reads.find(className, options);
  findText: NonNullable<StorageReads['findText']> = (className, options) => this.reads.findText(className, options);
  getText: NonNullable<StorageReads['getText']> = (className, objectId) => this.reads.getText(className, objectId);
  count: StorageReads['count'] = (className, options) => this.reads.count(className, options);
  relatedIds: StorageReads['relatedIds'] = (ownerClass, field, owningId) => this.reads.relatedIds(ownerClass, field, owningId);
  owningIds: StorageReads['owningIds'] = (ownerClass, field, relatedIds) => this.reads.owningIds(ownerClass, field, relatedIds);
  getConfig: StorageReads['getConfig'] = () => this.reads.getConfig();
  group: StorageReads['group'] = (className, where, plan) => this.reads.group(className, where, plan);

  async close(): Promise<void> {
    // A group waiting for its commit is committed, not rolled back by the close.
    if (this.pending && !this.busy) {
      this.busy = true;
      try {
        this.commit();
      } catch {
        // Each member of the group was rejected with the error.
      }
    }
    this.database.close();
  }
}

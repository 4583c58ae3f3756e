import { DEFAULT_FIELDS, type FieldType, type SchemaLookup } from '../types.js';
import type { StoredClass } from './adapter.js';

/** Entries are shared read-only; whoever changes one works on a copy (`structuredClone`). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * A storage adapter's in-memory copy of an app's schema (StorageAdapter.getClass/fields/loadSchema,
 * read synchronously by the engine and the query compiler). Entries are frozen; every change makes a
 * new map, so a `view()` taken earlier keeps what it saw (a transaction's rollback restores one, and
 * the PostgreSQL adapter compares one with the entries after another process's change).
 */
export class SchemaCache implements SchemaLookup {
  private classes: ReadonlyMap<string, Readonly<StoredClass>>;
  /** Changes with every change of the entries (query/statementCache.ts forgets its statements then). */
  generation = 0;
  /** Each class's fields with the default fields, built on first use. */
  private readonly merged = new Map<string, Readonly<Record<string, FieldType>>>();

  constructor(entries: readonly StoredClass[] = []) {
    this.classes = new Map(entries.map((cls) => [cls.className, deepFreeze(cls)]));
  }

  /** Replaces every entry (the schema as read again from the database). */
  replace(entries: readonly StoredClass[]): void {
    this.restore(new Map(entries.map((cls) => [cls.className, deepFreeze(cls)])));
  }

  /** Puts (a frozen copy of) one class's entry. */
  set(cls: StoredClass): void {
    const next = new Map(this.classes);
    next.set(cls.className, deepFreeze(structuredClone(cls)));
    this.restore(next);
  }

  delete(className: string): void {
    const next = new Map(this.classes);
    next.delete(className);
    this.restore(next);
  }

  /** The entries as they are now; later changes do not show in it. */
  view(): ReadonlyMap<string, Readonly<StoredClass>> {
    return this.classes;
  }

  /** Makes a view taken earlier the entries again (a rolled-back transaction). */
  restore(view: ReadonlyMap<string, Readonly<StoredClass>>): void {
    this.classes = view;
    this.merged.clear();
    this.generation++;
  }

  get(className: string): Readonly<StoredClass> | undefined {
    return this.classes.get(className);
  }

  has(className: string): boolean {
    return this.classes.has(className);
  }

  /** Every field of a class with its type, the default fields included; undefined for an unknown class. */
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

  /** Every entry, as copies the caller may change. */
  load(): StoredClass[] {
    return [...this.classes.values()].map((c) => structuredClone(c) as StoredClass);
  }
}

import type { StoredRow } from '../storage/adapter.js';

/**
 * One committed change of an object, as LiveQuery needs it (Parse Server's afterSave/afterDelete
 * notifications to its LiveQuery server): `original` is the object before an update or a delete,
 * `object` after a create or an update.
 */
export type ObjectChange =
  | { kind: 'save'; className: string; object: StoredRow; original: StoredRow | undefined }
  | { kind: 'delete'; className: string; original: StoredRow };

/**
 * The listeners of one app's committed object changes (DataEngine calls `emit` once a write has
 * committed). A listener's failure is its own: it never fails the write.
 */
export class ObjectChanges {
  private readonly listeners = new Set<(change: ObjectChange) => void>();

  /** Adds a listener. @returns the function that removes it. */
  listen(listener: (change: ObjectChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener; a throwing listener is skipped. */
  emit(change: ObjectChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A subscriber's trouble is not the writer's.
      }
    }
  }

  /** Whether anyone listens (so that a write without subscribers costs nothing more). */
  get heard(): boolean {
    return this.listeners.size > 0;
  }
}

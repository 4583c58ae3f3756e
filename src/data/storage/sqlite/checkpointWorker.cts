/**
 * The checkpoint thread (checkpointer.ts): a connection of its own to each app database it is asked
 * about, running `PRAGMA wal_checkpoint(PASSIVE)` on request. PASSIVE copies what no reader still
 * needs and never waits for a lock, so the event loop's connection is never held up by it.
 * Messages in: `{type: 'checkpoint' | 'release', file}`; out: `{type: 'done', file, error?}`.
 */
import { parentPort } from 'node:worker_threads';
import Database = require('better-sqlite3');

type Message = { type: 'checkpoint' | 'release'; file: string };

const connections = new Map<string, Database.Database>();

function connection(file: string): Database.Database {
  let db = connections.get(file);
  if (!db) {
    db = new Database(file, { fileMustExist: true });
    // As the app's own connection: the checkpoint syncs the WAL, then the database file.
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    connections.set(file, db);
  }
  return db;
}

parentPort!.on('message', (message: Message) => {
  let error: string | undefined;
  try {
    if (message.type === 'checkpoint') connection(message.file).pragma('wal_checkpoint(PASSIVE)');
    else {
      connections.get(message.file)?.close();
      connections.delete(message.file);
    }
  } catch (e) {
    // The database went away (its app was deleted) or is busy: the next request tries again.
    error = (e as Error).message;
    connections.get(message.file)?.close();
    connections.delete(message.file);
  }
  parentPort!.postMessage({ type: 'done', file: message.file, request: message.type, error });
});

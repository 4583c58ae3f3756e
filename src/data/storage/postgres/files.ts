import { Readable } from 'node:stream';
import { ParseCode, ParseError } from '../../errors.js';
import {
  fallbackContentType,
  isStoredName,
  limitedChunks,
  prepareUpload,
  type FileInfo,
  type FileStore,
  type StoredFile,
  type UploadBody,
  type UploadOptions,
} from '../../files.js';
import type { PostgresDatabase, Run } from './database.js';
import { quoteIdent } from './layout.js';

/**
 * Bytes per row of `_FILE_CHUNKS`: GridFS's default chunk size (Parse Server keeps files in GridFS
 * on MongoDB). One chunk is what a process holds of a file at a time, upload or download.
 */
export const FILE_CHUNK_SIZE = 256 * 1024;

/**
 * The uploaded files of one Backend App in its PostgreSQL schema (layout.ts), so that every
 * Backyard process on the database serves them whatever its home:
 *
 * - `"_FILES"`: `name text PRIMARY KEY` (the stored name), `"contentType" text`, `size bigint`,
 *   `"createdAt" text` (ISO 8601), `metadata jsonb`, `tags jsonb`;
 * - `"_FILE_CHUNKS"`: `name text, n integer, bytes bytea` (FILE_CHUNK_SIZE bytes but the last),
 *   primary key `(name, n)`.
 *
 * An upload is one transaction (the chunks, then the record): a reader never sees half a file and
 * a failed upload leaves nothing. It holds one pooled connection while the body arrives. A download
 * reads one chunk per statement, without holding a connection between them; a file deleted
 * meanwhile ends the stream with an error.
 */
export class PostgresFileStore implements FileStore {
  private ensured: Promise<void> | undefined;

  /**
   * @param db the shared database.
   * @param schema the app's schema (layout.ts, appSchema); it and the tables are made on first use.
   */
  constructor(
    private readonly db: PostgresDatabase,
    private readonly schema: string,
  ) {}

  private get files(): string {
    return `${quoteIdent(this.schema)}."_FILES"`;
  }

  private get chunks(): string {
    return `${quoteIdent(this.schema)}."_FILE_CHUNKS"`;
  }

  /** Makes the schema and tables when missing, once per store (a failure is tried again by the next call). */
  private ensure(): Promise<void> {
    this.ensured ??= this.db
      .transaction(async (run) => {
        // The app's lock, as its adapter takes it: two processes would race on CREATE.
        await run('SELECT pg_advisory_xact_lock(hashtext(?))', [this.schema]);
        if ((await run('SELECT to_regclass(?) AS known', [this.chunks])).rows[0]?.known) return;
        await run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
        await run(
          `CREATE TABLE IF NOT EXISTS ${this.files} (name text COLLATE "C" PRIMARY KEY, "contentType" text NOT NULL, size bigint NOT NULL, "createdAt" text NOT NULL, metadata jsonb, tags jsonb)`,
        );
        await run(`CREATE TABLE IF NOT EXISTS ${this.chunks} (name text COLLATE "C" NOT NULL, n integer NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (name, n))`);
        // Uploads are mostly compressed already (images, video): kept out of line, not compressed again.
        await run(`ALTER TABLE ${this.chunks} ALTER COLUMN bytes SET STORAGE EXTERNAL`);
      })
      .catch((error: unknown) => {
        this.ensured = undefined;
        throw error;
      });
    return this.ensured;
  }

  async save(originalName: string, body: UploadBody, options: UploadOptions = {}): Promise<{ name: string; contentType: string }> {
    const upload = prepareUpload(originalName, options);
    await this.ensure();
    await this.db.transaction(async (run: Run) => {
      let n = 0;
      let size = 0;
      for await (const chunk of limitedChunks(body, upload.maxSize, FILE_CHUNK_SIZE)) {
        await run(`INSERT INTO ${this.chunks} (name, n, bytes) VALUES (?, ?, ?)`, [upload.name, n++, chunk]);
        size += chunk.length;
      }
      const { contentType, createdAt, metadata, tags } = upload.info;
      await run(`INSERT INTO ${this.files} (name, "contentType", size, "createdAt", metadata, tags) VALUES (?, ?, ?, ?, ?, ?)`, [
        upload.name,
        contentType,
        size,
        createdAt,
        metadata === undefined ? null : JSON.stringify(metadata),
        tags === undefined ? null : JSON.stringify(tags),
      ]);
    });
    return { name: upload.name, contentType: upload.contentType };
  }

  async info(name: string): Promise<FileInfo | undefined> {
    if (!isStoredName(name)) return undefined;
    await this.ensure();
    const row = (await this.db.run(`SELECT "contentType", size, "createdAt", metadata, tags FROM ${this.files} WHERE name = ?`, [name])).rows[0] as
      | { contentType: string; size: string; createdAt: string; metadata: Record<string, unknown> | null; tags: Record<string, unknown> | null }
      | undefined;
    if (!row) return undefined;
    const info: FileInfo = { contentType: row.contentType || fallbackContentType(name), size: Number(row.size), createdAt: row.createdAt };
    if (row.metadata) info.metadata = row.metadata;
    if (row.tags) info.tags = row.tags;
    return info;
  }

  async open(name: string): Promise<StoredFile | undefined> {
    const info = await this.info(name);
    if (!info) return undefined;
    return { contentType: info.contentType, size: info.size, read: (start, end) => this.read(name, start, end) };
  }

  /** Bytes `start` to `end` (inclusive) of a stored file, one chunk per statement as the reader asks. */
  private read(name: string, start: number, end: number): Readable {
    const sql = `SELECT bytes FROM ${this.chunks} WHERE name = ? AND n = ?`;
    let n = Math.floor(start / FILE_CHUNK_SIZE);
    const last = Math.floor(end / FILE_CHUNK_SIZE);
    const db = this.db;
    return Readable.from(
      (async function* () {
        for (; n <= last; n++) {
          const row = (await db.run(sql, [name, n])).rows[0] as { bytes: Buffer } | undefined;
          if (!row) throw new Error(`File ${name} was deleted while it was read.`);
          const from = n * FILE_CHUNK_SIZE;
          yield row.bytes.subarray(Math.max(0, start - from), Math.min(row.bytes.length, end + 1 - from));
        }
      })(),
      { objectMode: false },
    );
  }

  async delete(name: string): Promise<boolean> {
    if (!isStoredName(name)) throw new ParseError(ParseCode.INVALID_FILE_NAME, `Invalid file name: ${name}.`);
    await this.ensure();
    return this.db.transaction(async (run) => {
      const removed = await run(`DELETE FROM ${this.files} WHERE name = ?`, [name]);
      await run(`DELETE FROM ${this.chunks} WHERE name = ?`, [name]);
      return (removed.rowCount ?? 0) > 0;
    });
  }
}

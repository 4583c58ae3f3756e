import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ParseCode, ParseError } from './errors.js';
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
} from './files.js';

/** Bytes handed to one write: what is in memory of an upload at a time. */
const WRITE_CHUNK = 256 * 1024;

/**
 * The uploaded files of one Backend App on disk, in `apps/<appId>/files/` (docs/design.md, "State"), the
 * store of SQLite homes:
 *
 * - `<name>`: the bytes, where `<name>` is `<32 hex>_<original name>` as Parse Server generates it;
 * - `.meta/<name>.json`: `{contentType, size, createdAt, metadata?, tags?}` beside it;
 * - `.tmp/`: files being written, renamed into place once on disk (a reader never sees half a file,
 *   and a failed upload leaves nothing).
 *
 * Stored names pass Parse's file-name rule, whose first character is never a dot, so they can
 * neither be `.meta` or `.tmp` nor leave the folder. Writes are durable (file and folder synced)
 * before they resolve.
 */
export class DiskFileStore implements FileStore {
  constructor(readonly folder: string) {}

  /** The path of a stored name inside the folder. @throws ParseError 122 for a name outside the rule. */
  private pathOf(name: string, sub?: '.meta'): string {
    if (!isStoredName(name)) throw new ParseError(ParseCode.INVALID_FILE_NAME, `Invalid file name: ${name}.`);
    const dir = sub ? path.join(this.folder, sub) : this.folder;
    const file = path.join(dir, sub ? `${name}.json` : name);
    if (path.dirname(file) !== dir) throw new ParseError(ParseCode.INVALID_FILE_NAME, `Invalid file name: ${name}.`);
    return file;
  }

  async save(originalName: string, body: UploadBody, options: UploadOptions = {}): Promise<{ name: string; contentType: string }> {
    const upload = prepareUpload(originalName, options);
    const target = this.pathOf(upload.name);
    const sidecar = this.pathOf(upload.name, '.meta');
    // The bytes first, under .tmp: their size is known once they are all there.
    const tmp = await this.tmpFile();
    let size = 0;
    try {
      const handle = await fs.promises.open(tmp, 'wx', 0o600);
      try {
        for await (const chunk of limitedChunks(body, upload.maxSize, WRITE_CHUNK)) {
          await handle.write(chunk);
          size += chunk.length;
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      // The sidecar before the bytes appear under their name, so that their content type is known.
      const info: FileInfo = { ...upload.info, size };
      await this.writeAtomic(sidecar, Buffer.from(JSON.stringify(info)));
      try {
        await fs.promises.rename(tmp, target);
      } catch (error) {
        await fs.promises.rm(sidecar, { force: true });
        throw error;
      }
    } catch (error) {
      await fs.promises.rm(tmp, { force: true });
      throw error;
    }
    await syncFolder(this.folder);
    return { name: upload.name, contentType: upload.contentType };
  }

  /** A new path in `.tmp/` (created when missing). */
  private async tmpFile(): Promise<string> {
    const tmpDir = path.join(this.folder, '.tmp');
    await fs.promises.mkdir(tmpDir, { recursive: true });
    return path.join(tmpDir, randomBytes(12).toString('hex'));
  }

  /** Writes through a temporary file, syncs it, renames it into place and syncs the folder. */
  private async writeAtomic(target: string, data: Buffer): Promise<void> {
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const tmp = await this.tmpFile();
    try {
      const handle = await fs.promises.open(tmp, 'wx', 0o600);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(tmp, target);
    } catch (error) {
      await fs.promises.rm(tmp, { force: true });
      throw error;
    }
    await syncFolder(path.dirname(target));
  }

  async info(name: string): Promise<FileInfo | undefined> {
    if (!isStoredName(name)) return undefined;
    try {
      return JSON.parse(await fs.promises.readFile(this.pathOf(name, '.meta'), 'utf8')) as FileInfo;
    } catch {
      return undefined;
    }
  }

  /**
   * A file without a sidecar (imported, or left by a crash between the two renames) gets the
   * content type of its extension; its size is the file's.
   */
  async open(name: string): Promise<StoredFile | undefined> {
    if (!isStoredName(name)) return undefined;
    const file = this.pathOf(name);
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(file);
    } catch {
      return undefined;
    }
    if (!stat.isFile()) return undefined;
    const contentType = (await this.info(name))?.contentType ?? fallbackContentType(name);
    return { contentType, size: stat.size, read: (start, end) => fs.createReadStream(file, { start, end }) };
  }

  async delete(name: string): Promise<boolean> {
    const file = this.pathOf(name);
    const existed = await fs.promises.rm(file).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    await fs.promises.rm(this.pathOf(name, '.meta'), { force: true });
    if (existed) await syncFolder(this.folder);
    return existed;
  }
}

/** fsync of a folder, so that a rename or removal in it is on disk. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

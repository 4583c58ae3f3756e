import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import mime from 'mime';
import { ParseCode, ParseError } from './errors.js';

/**
 * Uploaded files of one Backend App, kept in `apps/<appId>/files/` (design.md, "State"):
 *
 * - `<name>`: the bytes, where `<name>` is `<32 hex>_<original name>` as Parse Server generates it;
 * - `.meta/<name>.json`: `{contentType, size, createdAt, metadata?, tags?}` beside it;
 * - `.tmp/`: files being written, renamed into place once on disk (a reader never sees half a file).
 *
 * Stored names pass Parse's file-name rule, whose first character is never a dot, so they can
 * neither be `.meta` or `.tmp` nor leave the folder.
 */

/** Parse Server's rule for file names (`FilesAdapter.validateFilename`), and its length limit. */
export const FILE_NAME = /^[_a-zA-Z0-9][a-zA-Z0-9@. ~_-]*$/;
export const MAX_FILE_NAME_LENGTH = 128;

/** Largest file accepted: 20 MiB, the data API's body limit. */
export const MAX_FILE_SIZE = 20 * 1024 * 1024;

/** Stored names: a generated prefix (33 characters) plus an original name, or an imported Parse name. */
const MAX_STORED_NAME_LENGTH = 200;

/**
 * Types mime-db marks UTF-8 outside `text/*` (the ones a file extension maps to): served with
 * `; charset=utf-8` as Parse Server's Express (through mime-types' `contentType`) serves them.
 */
const UTF8_TYPES = new Set([
  'application/json',
  'application/javascript',
  'application/manifest+json',
  'application/vnd.syncml+xml',
  'application/vnd.syncml.dm+wbxml',
  'application/vnd.syncml.dm+xml',
  'application/vnd.syncml.dmddf+xml',
  'application/vnd.wap.wbxml',
]);

const OCTET_STREAM = 'application/octet-stream';

/** A content type as a header may carry it: `type/subtype` with optional parameters, no line breaks. */
const CONTENT_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[^\r\n]*)?$/;

/**
 * Extensions that browsers render as active content (HTML, SVG, XML and its kin), refused as Parse
 * Server 9's default `fileUpload.fileExtensions` refuses them (advisories GHSA-v5hf-f4c3-m5rv,
 * GHSA-hcj7-6gxh-24ww, GHSA-42ph-pf9q-cr72): a page served from the data API's origin could phish
 * or read what that origin stores. The same names as a content type's subtype (`image/svg+xml`,
 * `text/xml`) are refused too, since a declared type is served as declared.
 */
const REFUSED_EXTENSION = /^([xs]?html?(\+xml)?|xht|svg(z|\+xml)?|xml|xslt?(\+xml)?|xsd|rng|rdf(\+xml)?|owl|mathml(\+xml)?)$/i;

/** The subtype of a content type (`svg+xml` of `image/svg+xml; charset=utf-8`). */
const subtypeOf = (contentType: string): string => contentType.split(';')[0]!.split('/')[1]?.trim() ?? '';

const extensionOf = (name: string): string => {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
};

/**
 * The content type of a file name's extension, from the `mime` package's standard and other
 * types, which Parse Server's FilesController and FilesRouter use; undefined for an unknown one.
 */
export function contentTypeFor(name: string): string | undefined {
  return extensionOf(name) ? (mime.getType(name) ?? undefined) : undefined;
}

/**
 * A content type as a download's header carries it: `; charset=utf-8` added to `text/*` and the
 * UTF8_TYPES that name no charset, as Express adds it to Parse Server's downloads.
 */
export function servedContentType(contentType: string): string {
  const base = contentType.split(';')[0]!.trim().toLowerCase();
  if (/;\s*charset=/i.test(contentType) || !(base.startsWith('text/') || UTF8_TYPES.has(base))) return contentType;
  return `${contentType}; charset=utf-8`;
}

/**
 * Checks an original file name with Parse's rule.
 * @throws ParseError 122 INVALID_FILE_NAME for a name over 128 characters or with other characters
 *   than letters, digits and `@. ~_-` (not first).
 */
export function checkFileName(name: string): void {
  if (name.length > MAX_FILE_NAME_LENGTH) throw new ParseError(ParseCode.INVALID_FILE_NAME, 'Filename too long.');
  if (!FILE_NAME.test(name)) {
    throw new ParseError(ParseCode.INVALID_FILE_NAME, 'Filename contains invalid characters: use letters, digits and @. ~_- (not first).');
  }
}

/** Whether `name` can be a stored file's name (Parse's rule, bounded length). */
export const isStoredName = (name: string): boolean => name.length <= MAX_STORED_NAME_LENGTH && FILE_NAME.test(name);

/** What the sidecar of a stored file holds. */
export interface FileInfo {
  contentType: string;
  size: number;
  createdAt: string;
  metadata?: Record<string, unknown>;
  tags?: Record<string, unknown>;
}

/** What an upload brings besides the bytes. */
export interface UploadOptions {
  /** The uploader's content type; absent or `application/octet-stream`: taken from the extension. */
  contentType?: string;
  metadata?: Record<string, unknown>;
  tags?: Record<string, unknown>;
  /**
   * The app's `fileUpload.fileExtensions` for a client's upload (settings.ts): tested on the
   * extension, and on the declared content type's subtype when the extension is unknown, as Parse
   * Server tests them. Absent for the master key, which Parse Server lets upload any extension.
   */
  allowExtension?: (extension: string) => boolean;
}

/**
 * The files of one app. Reads are synchronous (the public download route answers synchronously);
 * writes are asynchronous and durable (file and folder synced) before they resolve.
 */
export class FileStore {
  constructor(readonly folder: string) {}

  /** The path of a stored name inside the folder. @throws ParseError 122 for a name outside the rule. */
  private pathOf(name: string, sub?: '.meta'): string {
    if (!isStoredName(name)) throw new ParseError(ParseCode.INVALID_FILE_NAME, `Invalid file name: ${name}.`);
    const dir = sub ? path.join(this.folder, sub) : this.folder;
    const file = path.join(dir, sub ? `${name}.json` : name);
    if (path.dirname(file) !== dir) throw new ParseError(ParseCode.INVALID_FILE_NAME, `Invalid file name: ${name}.`);
    return file;
  }

  /**
   * Stores an upload under a new name `<32 hex>_<originalName>` (with the content type's extension
   * appended when the name has none, as Parse Server does).
   * @returns the stored name and content type.
   * @throws ParseError 122 for a bad name; 130 FILE_SAVE_ERROR for an empty file or a file browsers
   *   render as active content (REFUSED_EXTENSION) or that `allowExtension` refuses; 129
   *   FILE_TOO_LARGE (status 413) above 20 MiB.
   */
  async save(originalName: string, data: Buffer, options: UploadOptions = {}): Promise<{ name: string; contentType: string }> {
    checkFileName(originalName);
    if (data.length === 0) throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'Invalid file upload.');
    if (data.length > MAX_FILE_SIZE) {
      throw new ParseError(ParseCode.FILE_TOO_LARGE, `The file is ${data.length} bytes; files may hold at most ${MAX_FILE_SIZE} bytes.`, 413);
    }
    const given = options.contentType?.trim();
    const declaredType = given && CONTENT_TYPE.test(given) ? given : undefined;
    let name = originalName;
    // Parse Server's FilesController.createFile: a name without an extension takes the declared
    // type's (no second dot after a trailing one); a name with one is served as the extension says.
    const added = !extensionOf(name) && declaredType ? mime.getExtension(declaredType) : null;
    if (added) name = `${name}${name.endsWith('.') ? '' : '.'}${added}`;
    const contentType = (added ? declaredType : contentTypeFor(name)) ?? declaredType ?? OCTET_STREAM;
    const allow = options.allowExtension;
    const declared = contentTypeFor(name) || !given ? '' : subtypeOf(given).replace(/\s+/g, '');
    const refused =
      [extensionOf(name), subtypeOf(contentType)].find((ext) => REFUSED_EXTENSION.test(ext)) ??
      (allow ? [extensionOf(name), declared].find((ext) => ext !== '' && !allow(ext)) : undefined);
    if (refused) throw new ParseError(ParseCode.FILE_SAVE_ERROR, `File upload of extension ${refused} is disabled.`);
    name = `${randomBytes(16).toString('hex')}_${name}`;
    const info: FileInfo = { contentType, size: data.length, createdAt: new Date().toISOString() };
    if (options.metadata && Object.keys(options.metadata).length) info.metadata = options.metadata;
    if (options.tags && Object.keys(options.tags).length) info.tags = options.tags;

    // The sidecar first: once the bytes appear under their name, their content type is known.
    const sidecar = this.pathOf(name, '.meta');
    await this.writeAtomic(sidecar, Buffer.from(JSON.stringify(info)));
    try {
      await this.writeAtomic(this.pathOf(name), data);
    } catch (error) {
      await fs.promises.rm(sidecar, { force: true });
      throw error;
    }
    return { name, contentType };
  }

  /** Writes through a temporary file, syncs it, renames it into place and syncs the folder. */
  private async writeAtomic(target: string, data: Buffer): Promise<void> {
    const tmpDir = path.join(this.folder, '.tmp');
    await fs.promises.mkdir(tmpDir, { recursive: true });
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const tmp = path.join(tmpDir, randomBytes(12).toString('hex'));
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

  /** The content type and sidecar of a stored file, or undefined when there is none. */
  info(name: string): FileInfo | undefined {
    if (!isStoredName(name)) return undefined;
    try {
      return JSON.parse(fs.readFileSync(this.pathOf(name, '.meta'), 'utf8')) as FileInfo;
    } catch {
      return undefined;
    }
  }

  /**
   * A stored file's bytes and content type; undefined for an unknown or invalid name. A file
   * without a sidecar (imported, or written by a crash between the two renames) gets the content
   * type of its extension.
   */
  async read(name: string): Promise<{ data: Buffer; contentType: string } | undefined> {
    if (!isStoredName(name)) return undefined;
    let data: Buffer;
    try {
      // Asynchronous: a 20 MiB download must not hold the event loop.
      data = await fs.promises.readFile(this.pathOf(name));
    } catch {
      return undefined;
    }
    return { data, contentType: this.info(name)?.contentType ?? contentTypeFor(name) ?? OCTET_STREAM };
  }

  /**
   * Deletes a stored file and its sidecar.
   * @returns false when there is no such file.
   * @throws ParseError 122 for a name outside Parse's rule.
   */
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

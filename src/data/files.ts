import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import mime from 'mime';
import { ParseCode, ParseError } from './errors.js';

/**
 * Rules shared by the stores of uploaded files (names, content types, refused extensions, the
 * size limit) and the interface they implement: the disk store of SQLite homes (diskFiles.ts) and
 * the PostgreSQL one (storage/postgres/files.ts). Uploads arrive and downloads leave as streams, so
 * that no store holds a whole file in memory.
 */

/** Parse Server's rule for file names (`FilesAdapter.validateFilename`), and its length limit. */
export const FILE_NAME = /^[_a-zA-Z0-9][a-zA-Z0-9@. ~_-]*$/;
export const MAX_FILE_NAME_LENGTH = 128;

/** Largest file accepted by default: 20 MiB, Parse Server's default `maxUploadSize` (settings.ts). */
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

/** What is kept of a stored file besides its bytes. */
export interface FileInfo {
  contentType: string;
  /** In bytes. */
  size: number;
  /** ISO 8601. */
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
  /** The largest upload accepted, in bytes (the app's `maxUploadSize`); MAX_FILE_SIZE when absent. */
  maxSize?: number;
}

/** The bytes of an upload as they arrive: a request body, or buffers at hand (the JSON form's base64). */
export type UploadBody = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** A stored file opened for reading. */
export interface StoredFile {
  contentType: string;
  /** In bytes. */
  size: number;
  /**
   * A stream of the bytes `start` to `end` (both inclusive, `0 <= start <= end < size`). It fails
   * (emits an error) when the file is deleted while it is read.
   */
  read(start: number, end: number): Readable;
}

/**
 * The uploaded files of one Backend App. Stored names are `<32 hex>_<original name>`, as Parse
 * Server generates them; a file is seen whole or not at all, and a failed upload leaves nothing.
 */
export interface FileStore {
  /**
   * Stores an upload under a new name, reading `body` as it arrives.
   * @returns the stored name and content type (`prepareUpload`).
   * @throws ParseError as `prepareUpload` and `limitedChunks` throw: 122 for a bad name, 130 for an
   *   empty or refused file or a body cut off, 129 (413) above `options.maxSize`.
   */
  save(originalName: string, body: UploadBody, options?: UploadOptions): Promise<{ name: string; contentType: string }>;
  /** A stored file's content type, size and metadata; undefined for an unknown or invalid name. */
  info(name: string): Promise<FileInfo | undefined>;
  /** A stored file opened for reading; undefined for an unknown or invalid name. */
  open(name: string): Promise<StoredFile | undefined>;
  /**
   * Deletes a stored file.
   * @returns false when there is no such file.
   * @throws ParseError 122 for a name outside Parse's rule.
   */
  delete(name: string): Promise<boolean>;
}

/** What `prepareUpload` decides before any byte is stored. */
export interface PreparedUpload {
  /** The stored name, `<32 hex>_<name>`. */
  name: string;
  contentType: string;
  /** The record to keep but for `size` (known once every byte arrived). */
  info: Omit<FileInfo, 'size'>;
  /** The largest size accepted, in bytes. */
  maxSize: number;
}

/**
 * The stored name, content type and record of an upload, before any byte is read (with the
 * content type's extension appended to a name that has none, as Parse Server's
 * FilesController.createFile does).
 * @throws ParseError 122 for a bad name; 130 FILE_SAVE_ERROR for a file browsers render as active
 *   content (REFUSED_EXTENSION) or that `allowExtension` refuses.
 */
export function prepareUpload(originalName: string, options: UploadOptions = {}): PreparedUpload {
  checkFileName(originalName);
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
  const info: Omit<FileInfo, 'size'> = { contentType, createdAt: new Date().toISOString() };
  if (options.metadata && Object.keys(options.metadata).length) info.metadata = options.metadata;
  if (options.tags && Object.keys(options.tags).length) info.tags = options.tags;
  return { name: `${randomBytes(16).toString('hex')}_${name}`, contentType, info, maxSize: options.maxSize ?? MAX_FILE_SIZE };
}

/** The content type a stored file is served with when its record is lost: its extension's. */
export const fallbackContentType = (name: string): string => contentTypeFor(name) ?? OCTET_STREAM;

/** The error of an upload over `maxSize` bytes: 129 FILE_TOO_LARGE with status 413. */
export const tooLarge = (maxSize: number): ParseError =>
  new ParseError(ParseCode.FILE_TOO_LARGE, `The file is larger than ${maxSize} bytes, the most this app accepts (its maxUploadSize setting).`, 413);

/**
 * The bytes of `body` in pieces of `chunkSize` bytes (the last one shorter), counted as they
 * arrive: no more than one piece and what the source hands over at once is in memory.
 * @throws ParseError 129 (413) as soon as more than `maxSize` bytes arrived; 130 FILE_SAVE_ERROR
 *   for an empty body, or when the body fails before its end (the client stopped sending it).
 */
export async function* limitedChunks(body: UploadBody, maxSize: number, chunkSize: number): AsyncGenerator<Buffer> {
  let total = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const source: AsyncIterator<Uint8Array> | Iterator<Uint8Array> = Symbol.asyncIterator in body ? body[Symbol.asyncIterator]() : body[Symbol.iterator]();
  for (;;) {
    let step: IteratorResult<Uint8Array>;
    try {
      step = await source.next();
    } catch {
      throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'Invalid file upload: the body stopped before its end (the client stopped sending it, or it is shorter than its Content-Length).');
    }
    if (step.done) break;
    const piece = step.value;
    total += piece.byteLength;
    if (total > maxSize) throw tooLarge(maxSize);
    let offset = 0;
    while (offset < piece.byteLength) {
      const take = Math.min(chunkSize - pendingBytes, piece.byteLength - offset);
      // Not copied: request bodies and the buffers of the JSON form are never reused by their sources.
      pending.push(piece.subarray(offset, offset + take));
      pendingBytes += take;
      offset += take;
      if (pendingBytes === chunkSize) {
        yield pending.length === 1 ? Buffer.from(pending[0]!.buffer, pending[0]!.byteOffset, pending[0]!.byteLength) : Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
      }
    }
  }
  if (total === 0) throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'Invalid file upload.');
  if (pendingBytes) yield Buffer.concat(pending, pendingBytes);
}

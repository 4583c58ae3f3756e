import busboy from 'busboy';
import { isPlainObject } from '../values.js';

/**
 * GraphQL multipart requests (https://github.com/jaydenseric/graphql-multipart-request-spec, which
 * Parse Server takes through graphql-upload): an `operations` field (the JSON request with each
 * file's place null), a `map` field (`{"<part name>": ["variables.file", ...]}`), then the files.
 * The body is already read, within the data API's limit (handler.ts), so parts are read from memory.
 */

/** Where the spec is, as graphql-upload's messages point to it. */
const SPEC = 'https://github.com/jaydenseric/graphql-multipart-request-spec';

/** Largest `operations` or `map` field, as graphql-upload's default `maxFieldSize` (1 MB). */
export const MAX_FIELD_SIZE = 1_000_000;

/** A request the spec does not allow: its HTTP status (400, or 413 for a field over MAX_FIELD_SIZE) and what was wrong. */
export class MultipartError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (message: string, status = 400) => new MultipartError(status, `${message} (${SPEC}).`);

/** One file part. */
export interface MultipartFile {
  /** The part's field name (a key of `map`). */
  field: string;
  filename: string;
  mimetype: string;
  data: Buffer;
}

/** `map` as the spec has it: part name → paths in `operations` (`variables.file`, `variables.files.0`). */
export type MultipartMap = Record<string, string[]>;

/**
 * `map`'s JSON text, checked: an object whose every entry is an array of strings.
 * @throws MultipartError 400 naming the entry that is wrong.
 */
export function parseMap(text: string): MultipartMap {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse('Invalid JSON in the ‘map’ multipart field');
  }
  if (!isPlainObject(parsed)) throw refuse('Invalid type for the ‘map’ multipart field: it must be an object of arrays of paths');
  for (const [key, paths] of Object.entries(parsed)) {
    if (!Array.isArray(paths)) throw refuse(`Invalid type for the ‘map’ multipart field entry key ‘${key}’: it must be an array of paths`);
    paths.forEach((p, i) => {
      if (typeof p !== 'string') throw refuse(`Invalid type for the ‘map’ multipart field entry key ‘${key}’ array index ‘${i}’: a path must be a string`);
    });
  }
  return parsed as MultipartMap;
}

/** Segments that would reach an object's prototype rather than its own data. */
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Puts each mapped part's value into `operations` at its paths (dot-separated keys and array
 * indexes). Stricter than graphql-upload, which creates any missing path: a path must lead through
 * objects and arrays that exist to a place that holds null or is absent (an object key; an array
 * index within the array), as the spec's clients send it; every path is checked before anything is set.
 * @param valueOf the value for a part name (an upload).
 * @throws MultipartError 400 naming the map entry, index and path for a path that leads nowhere.
 */
export function applyMap(operations: unknown, map: MultipartMap, valueOf: (key: string) => unknown): void {
  const places: { container: Record<string, unknown> | unknown[]; key: string; value: unknown }[] = [];
  for (const [key, paths] of Object.entries(map)) {
    paths.forEach((path, index) => {
      const bad = (why: string) => refuse(`Invalid object path for the ‘map’ multipart field entry key ‘${key}’ array index ‘${index}’ value ‘${path}’: ${why}`);
      const segments = path.split('.');
      let container: unknown = operations;
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i]!;
        if (UNSAFE.has(segment)) throw bad(`‘${segment}’ is not allowed in a path`);
        const last = i === segments.length - 1;
        if (Array.isArray(container)) {
          if (!/^(0|[1-9][0-9]*)$/.test(segment) || Number(segment) >= container.length) throw bad(`‘${segment}’ is not an index of the array there`);
        } else if (!isPlainObject(container)) {
          throw bad(`there is no object or array before ‘${segment}’`);
        } else if (!last && !Object.hasOwn(container, segment)) {
          throw bad(`‘${segment}’ is not there`);
        }
        if (last) {
          const current = (container as Record<string, unknown>)[segment];
          if (current !== null && current !== undefined) throw bad('the place of a file must hold null');
          places.push({ container: container as Record<string, unknown>, key: segment, value: valueOf(key) });
        } else container = (container as Record<string, unknown>)[segment];
      }
    });
  }
  for (const { container, key, value } of places) (container as Record<string, unknown>)[key] = value;
}

/**
 * Reads a GraphQL multipart body: `operations` first, then `map`, then the files (the spec's
 * order); a file part `map` does not name is skipped, as graphql-upload skips it.
 * @returns `operations` (a JSON object: batches are not taken, as on the JSON route) with every
 *   mapped place filled by `upload(file)`.
 * @throws MultipartError 400 for a body that is no multipart form, fields out of order or
 *   missing, JSON that is not JSON, a map path that leads nowhere or a mapped file that is not
 *   there; 413 for an `operations` or `map` field over MAX_FIELD_SIZE.
 */
export function readGraphQLMultipart(body: Buffer, contentType: string, upload: (file: MultipartFile) => unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fieldSize: MAX_FIELD_SIZE } });
    } catch (error) {
      return reject(refuse(`Invalid multipart body: ${(error as Error).message}`));
    }
    let operations: Record<string, unknown> | undefined;
    let map: MultipartMap | undefined;
    const files = new Map<string, MultipartFile>();
    let failed: MultipartError | undefined;
    const fail = (error: MultipartError) => {
      failed ??= error;
    };
    parser.on('field', (name, value, { valueTruncated }) => {
      if (failed) return;
      if (valueTruncated && (name === 'operations' || name === 'map')) return fail(refuse(`The ‘${name}’ multipart field value exceeds the ${MAX_FIELD_SIZE} byte size limit`, 413));
      if (name === 'operations') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return fail(refuse('Invalid JSON in the ‘operations’ multipart field'));
        }
        if (!isPlainObject(parsed)) return fail(refuse('Invalid type for the ‘operations’ multipart field: it must be a JSON object (batched operations are not taken)'));
        operations = parsed;
      } else if (name === 'map') {
        if (!operations) return fail(refuse('Misordered multipart fields; ‘map’ should follow ‘operations’'));
        try {
          map = parseMap(value);
        } catch (error) {
          fail(error as MultipartError);
        }
      }
    });
    parser.on('file', (name, stream, { filename, mimeType }) => {
      if (failed || !map || !Object.hasOwn(map, name) || files.has(name)) {
        if (!failed && !map) fail(refuse('Misordered multipart fields; files should follow ‘map’'));
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.set(name, { field: name, filename: filename ?? name, mimetype: mimeType, data: Buffer.concat(chunks) }));
    });
    parser.on('error', (error: Error) => reject(failed ?? refuse(`Invalid multipart body: ${error.message}`)));
    parser.on('close', () => {
      if (failed) return reject(failed);
      if (!operations) return reject(refuse('Missing multipart field ‘operations’'));
      if (!map) return reject(refuse('Missing multipart field ‘map’'));
      const missing = Object.keys(map).find((key) => !files.has(key));
      if (missing !== undefined) return reject(refuse(`File missing in the request: the ‘map’ names part ‘${missing}’, which the request does not hold`));
      // One value per part, however many places it fills: the file is stored once.
      const values = new Map([...files].map(([key, file]) => [key, upload(file)]));
      try {
        applyMap(operations, map, (key) => values.get(key));
      } catch (error) {
        return reject(error);
      }
      resolve(operations);
    });
    parser.end(body);
  });
}

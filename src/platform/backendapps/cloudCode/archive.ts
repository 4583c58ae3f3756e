import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { parseTreePath } from './paths.js';

/**
 * A cloud code tree kept as one archive (a version, versions.ts): a tar of its files, gzipped.
 * Entries are the files only, by tree path (`cloud/main.js`), in path order, with mode 0644 and a
 * fixed time, so that one tree always packs to the same bytes. Folders are not kept: a folder exists
 * because a file lies in it, and `cloud/node_modules` is never part of a tree (paths.ts).
 */
export type TreeFiles = ReadonlyMap<string, Buffer>;

/** Largest unpacked size accepted: the tree limit (20 MiB, limits.ts) leaves room for older, larger trees. */
const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

/** Packs `files` (tree path → content) into a gzipped tar. */
export async function packTree(files: TreeFiles): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  const done = pipeline(pack, zlib.createGzip(), collect);
  for (const name of [...files.keys()].sort()) {
    const content = files.get(name)!;
    await new Promise<void>((resolve, reject) => {
      pack.entry({ name, size: content.length, mode: 0o644, mtime: new Date(0), type: 'file' }, content, (error) => (error ? reject(error) : resolve()));
    });
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/**
 * The files of an archive made by `packTree`.
 * @throws Error when the archive is not a gzipped tar, unpacks to more than 256 MiB, or holds an
 *   entry that is not a file at a tree path (a damaged row: nothing made by `packTree`).
 */
export async function unpackTree(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  const reading = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, body, next) => {
      if (header.type !== 'file') {
        body.resume();
        return next(new Error(`the archive holds ${header.name}, which is not a file`));
      }
      const { path } = parseTreePath(header.name, { field: 'archive entry' });
      const parts: Buffer[] = [];
      body.on('data', (chunk) => parts.push(chunk as Buffer));
      body.on('end', () => {
        files.set(path, Buffer.concat(parts));
        next();
      });
      body.on('error', next);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(zlib.gunzipSync(archive, { maxOutputLength: MAX_UNPACKED_BYTES }));
  await reading;
  return files;
}

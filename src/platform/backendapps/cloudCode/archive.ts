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
  const tarBytes = zlib.gunzipSync(archive, { maxOutputLength: MAX_UNPACKED_BYTES });
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  extract.end(tarBytes);
  for await (const entry of extract) {
    const refused = refusal(entry.header);
    if (refused) {
      extract.destroy();
      throw new Error(`The archive of a cloud code version is damaged: ${refused}`);
    }
    const parts: Buffer[] = [];
    for await (const chunk of entry) parts.push(chunk as Buffer);
    files.set(entry.header.name, Buffer.concat(parts));
  }
  return files;
}

/** Why an entry cannot be a file of a tree, or undefined when it can. */
function refusal(header: tar.Header): string | undefined {
  if (header.type !== 'file') return `it holds ${JSON.stringify(header.name)}, which is not a file`;
  try {
    if (parseTreePath(header.name, { field: 'entry' }).path !== header.name) return `the entry ${JSON.stringify(header.name)} is not a tree path as packTree writes it`;
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

import { forbidden, invalid } from '../../../errors.js';
import { MAX_CHANGES, MAX_FILE_BYTES, MAX_TREE_BYTES, formatLimit } from './limits.js';
import { ancestorsOf, DEPENDENCIES_FOLDER, isDependencyPath, isRoot, parseTreePath } from './paths.js';
import { isInside, type TreeState } from './tree.js';

/**
 * One element of `changes` (spec, "CloudCodeChange"), as the operation's schema passes it. `data`
 * is text (written as UTF-8), or bytes for a rollback, which writes back a kept file as it was.
 */
export interface CloudCodeChange {
  path: string;
  operation: 'write' | 'delete';
  writeMode?: 'overwrite' | 'append' | undefined;
  data?: string | Buffer | undefined;
}

/** A file of the tree after the deploy: its size, and its new content when the deploy wrote it. */
export interface PlannedFile {
  size: number;
  content?: Buffer;
}

/** The tree as it will be once a deploy's changes are applied, and what to tell the caller. */
export interface DeployPlan {
  files: Map<string, PlannedFile>;
  folders: Set<string>;
  /** One line per change, in order: `wrote cloud/main.js (append, 40 bytes added, now 352 bytes)`. */
  lines: string[];
  /** Files written by the deploy that exist afterwards. */
  written: Set<string>;
  /** Files that did not exist before the deploy and do afterwards. */
  created: Set<string>;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const bytes = (n: number) => plural(n, 'byte');

/**
 * Works out the tree after `changes`, applied in order to `before`, without touching anything
 * (validate every change first). Folders that a write needs are created; a delete
 * removes a file, or a folder with all it holds (a root is emptied, never removed).
 *
 * @param readFile reads the current content of a file of `before` (needed to append to it).
 * @param maxChanges most changes accepted (`MAX_CHANGES`; a rollback, made of many, passes Infinity).
 * @throws ManagementError(invalid) (400) for more than 200 changes, a bad path, a write without
 *   `writeMode` or `data`, a delete with them, a write onto a folder or inside a file, a delete of a
 *   path that does not exist, a file over 1 MiB or a tree over 20 MiB after the changes;
 *   ManagementError(forbidden) (403) for a path outside `cloud/` and `public/`, a write to a root, or a
 *   path inside `cloud/node_modules` (installed dependencies, see dependencies.ts).
 */
export function planDeploy(
  before: TreeState,
  changes: readonly CloudCodeChange[],
  readFile: (treePath: string) => Buffer,
  maxChanges = MAX_CHANGES,
): DeployPlan {
  if (changes.length > maxChanges) {
    throw invalid(`changes has ${changes.length} entries, over the limit of ${MAX_CHANGES} changes per call. Split the deploy into several calls.`);
  }
  const files = new Map<string, PlannedFile>([...before.files].map(([p, size]) => [p, { size }]));
  const folders = new Set(before.folders);
  const lines: string[] = [];
  const written = new Set<string>();
  const contentOf = (p: string): Buffer => files.get(p)?.content ?? readFile(p);

  changes.forEach((change, index) => {
    const field = `changes[${index}].path`;
    const { path: p, root } = parseTreePath(change.path, { field, trailingSlash: change.operation === 'delete' });
    const label = `changes[${index}] (${p})`;
    if (isDependencyPath(p)) {
      throw forbidden(
        `${label} lies in ${DEPENDENCIES_FOLDER}/, where Backyard installs the packages named in cloud/package.json. Add the package to "dependencies" in cloud/package.json instead; it is installed on deploy.`,
      );
    }
    if (change.operation === 'write') {
      if (isRoot(p)) throw forbidden(`${label} writes to the root folder ${p}/ itself. Write a file inside it, e.g. ${root === 'cloud' ? 'cloud/main.js' : 'public/index.html'}.`);
      if (change.writeMode === undefined) {
        throw invalid(`${label} is a write without writeMode. Add "writeMode": "overwrite" to replace the file, or "append" to add to its end.`);
      }
      if (change.data === undefined) throw invalid(`${label} is a write without data. Add "data" with the content to write ("" for an empty file).`);
      if (folders.has(p)) throw invalid(`${label} writes to ${p}, which is a folder. Write to a file inside it, or delete the folder first.`);
      const blocking = ancestorsOf(p).find((a) => files.has(a));
      if (blocking) throw invalid(`${label} needs the folder ${blocking}, but ${blocking} is a file. Choose another path, or delete that file first.`);
      for (const a of ancestorsOf(p)) folders.add(a);
      const added = typeof change.data === 'string' ? Buffer.from(change.data, 'utf8') : change.data;
      const existed = files.has(p);
      const content = change.writeMode === 'append' && existed ? Buffer.concat([contentOf(p), added]) : added;
      files.set(p, { size: content.length, content });
      written.add(p);
      lines.push(
        change.writeMode === 'append' && existed
          ? `wrote ${p} (append, ${bytes(added.length)} added, now ${bytes(content.length)})`
          : `wrote ${p} (${change.writeMode}, ${bytes(content.length)}${existed ? '' : ', new file'})`,
      );
      return;
    }
    if (change.writeMode !== undefined || change.data !== undefined) {
      throw invalid(`${label} is a delete, which takes no writeMode or data. Remove them, or use "operation": "write".`);
    }
    if (files.has(p)) {
      lines.push(`deleted ${p} (${bytes(files.get(p)!.size)})`);
      files.delete(p);
      written.delete(p);
      return;
    }
    if (!folders.has(p)) throw invalid(`${label} deletes ${p}, which does not exist. Read the tree with getCloudCode to see its files.`);
    let count = 0;
    let size = 0;
    for (const [f, file] of files) {
      if (!isInside(f, p)) continue;
      count++;
      size += file.size;
      files.delete(f);
      written.delete(f);
    }
    for (const d of folders) if (isInside(d, p)) folders.delete(d);
    if (isRoot(p)) lines.push(`emptied ${p}/ (${plural(count, 'file')}, ${bytes(size)})`);
    else {
      folders.delete(p);
      lines.push(`deleted folder ${p}/ (${plural(count, 'file')}, ${bytes(size)})`);
    }
  });

  for (const p of written) {
    const size = files.get(p)!.size;
    if (size > MAX_FILE_BYTES) {
      throw invalid(`${p} would be ${bytes(size)} after this deploy, over the limit of ${formatLimit(MAX_FILE_BYTES)} (${MAX_FILE_BYTES} bytes) per file. Split it into several files.`);
    }
  }
  const total = [...files.values()].reduce((sum, f) => sum + f.size, 0);
  if (total > MAX_TREE_BYTES) {
    throw invalid(`The cloud code tree would hold ${bytes(total)} after this deploy, over the limit of ${formatLimit(MAX_TREE_BYTES)} (${MAX_TREE_BYTES} bytes) for cloud/ and public/ together. Delete files you no longer need.`);
  }
  const created = new Set([...written].filter((p) => !before.files.has(p)));
  return { files, folders, lines, written, created };
}

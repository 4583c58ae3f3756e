import fs from 'node:fs';
import path from 'node:path';
import { notFound } from '../../../errors.js';
import { CLOUD_ROOTS, DEPENDENCIES_FOLDER, isRoot, onDisk, parseTreePath } from './paths.js';
import { kindAt } from './tree.js';

/**
 * getCloudCode's answer.
 *
 * A file answers its content as it is. A folder answers a listing, entries in path order:
 * - each file as a header line `=== <path> (<size> bytes) ===` followed by its content (ended by a
 *   newline if it has none; the size tells the exact length). A file that is not UTF-8 text (or
 *   holds NUL bytes) shows as `=== <path> (binary, <size> bytes) ===` with no content; a single
 *   binary file answers `(binary, <size> bytes)`;
 * - with `recursive` false, each sub-folder as its path with a trailing `/`, and no content; with
 *   `recursive` true (the default), the files of every sub-folder, and empty sub-folders as `path/`;
 * - an empty folder answers `(<path>/ is empty)`.
 * The whole tree (no path) lists both roots, `cloud/` then `public/`. Listings leave out
 * `cloud/node_modules` (installed dependencies) unless it, or a path in it, is asked for.
 */

/** Header line of a file in a listing. */
export const fileHeader = (treePath: string, size: number, binary = false): string =>
  `=== ${treePath} (${binary ? 'binary, ' : ''}${size} byte${size === 1 ? '' : 's'}) ===`;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of a file, or undefined when it is binary (not UTF-8, or holding NUL bytes). */
export function textOf(content: Buffer): string | undefined {
  if (content.includes(0)) return undefined;
  try {
    return utf8.decode(content);
  } catch {
    return undefined;
  }
}

/** Entries of a folder on disk, names sorted, only files and folders (links are not followed). */
function children(tree: string, folder: string): Array<{ path: string; kind: 'file' | 'folder' }> {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(onDisk(tree, folder), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((e) => e.isFile() || e.isDirectory())
    .map((e) => ({ path: folder === '' ? e.name : `${folder}/${e.name}`, kind: e.isFile() ? ('file' as const) : ('folder' as const) }))
    // The installed dependencies are listed only when asked for by their own path.
    .filter((e) => e.path !== DEPENDENCIES_FOLDER)
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function fileEntry(tree: string, treePath: string): string {
  const content = fs.readFileSync(onDisk(tree, treePath));
  const text = textOf(content);
  if (text === undefined) return `${fileHeader(treePath, content.length, true)}\n`;
  return `${fileHeader(treePath, content.length)}\n${text}${text === '' || text.endsWith('\n') ? '' : '\n'}`;
}

function listing(tree: string, folder: string, recursive: boolean): string {
  const parts: string[] = [];
  const visit = (current: string) => {
    const entries = current === '' ? CLOUD_ROOTS.map((r) => ({ path: r, kind: 'folder' as const })) : children(tree, current);
    for (const entry of entries) {
      if (entry.kind === 'file') parts.push(fileEntry(tree, entry.path));
      else if (!recursive) parts.push(`${entry.path}/\n`);
      else {
        const before = parts.length;
        visit(entry.path);
        if (parts.length === before && !isRoot(entry.path)) parts.push(`${entry.path}/\n`);
      }
    }
  };
  visit(folder);
  return parts.length === 0 ? `(${folder === '' ? 'the cloud code tree' : `${folder}/`} is empty)\n` : parts.join('');
}

/** Whether a path's real location (links resolved) stays inside the tree; false when it does not exist. */
function withinTree(tree: string, treePath: string): boolean {
  try {
    return fs.realpathSync(onDisk(tree, treePath)).startsWith(`${fs.realpathSync(tree)}${path.sep}`);
  } catch {
    return false;
  }
}

/**
 * Reads a file or a folder of the tree at `tree` (`apps/<appId>/cloud`), in the format above.
 * @param rawPath the caller's path; undefined or `''` for the whole tree.
 * @param recursive for a folder: include sub-folders' files (default true); ignored for a file.
 * @throws ManagementError(invalid) (400) for a malformed path, ManagementError(forbidden) (403) for a
 *   path outside `cloud/` and `public/`, ManagementError(notFound) (404) when nothing is at the path.
 */
export function readTree(tree: string, rawPath: string | undefined, recursive = true): string {
  const { path: treePath } = parseTreePath(rawPath ?? '', { field: 'path', emptyIsTree: true, trailingSlash: true });
  if (treePath === '' || isRoot(treePath)) return listing(tree, treePath, recursive);
  const kind = withinTree(tree, treePath) ? kindAt(tree, treePath) : undefined;
  if (kind === 'folder') return listing(tree, treePath, recursive);
  if (kind === 'file') {
    const content = fs.readFileSync(onDisk(tree, treePath));
    const text = textOf(content);
    return text ?? `(binary, ${content.length} byte${content.length === 1 ? '' : 's'})`;
  }
  throw notFound(`Nothing exists at ${treePath} in this app's cloud code. Call getCloudCode without a path to list every file.`);
}

import path from 'node:path';
import { forbidden, invalid } from '../../../errors.js';
import { MAX_PATH_CHARS, MAX_SEGMENT_BYTES } from './limits.js';

/**
 * Paths of a Backend App's cloud code tree. The tree is the folder
 * `apps/<appId>/cloud/` and holds two roots: `cloud/` (server code, entry `cloud/main.js`) and
 * `public/` (static files). Callers name files by their path inside the tree, `/`-separated:
 * `cloud/main.js` is stored at `apps/<appId>/cloud/cloud/main.js`.
 */

export const CLOUD_ROOTS = ['cloud', 'public'] as const;
export type CloudRoot = (typeof CLOUD_ROOTS)[number];

/** The entry file of the server code, relative to the tree. */
export const CLOUD_ENTRY = 'cloud/main.js';

/**
 * Where the packages named in `cloud/package.json` are installed on deploy (dependencies.ts): beside
 * that file, so the worker's `require` finds them. Backyard owns this folder: deploys may not write
 * into it, and listings, limits and deploys of the tree leave it out.
 */
export const DEPENDENCIES_FOLDER = 'cloud/node_modules';

/** True for `cloud/node_modules` and every path inside it. */
export const isDependencyPath = (treePath: string): boolean => treePath === DEPENDENCIES_FOLDER || treePath.startsWith(`${DEPENDENCIES_FOLDER}/`);

/** The tree's folder inside an app's folder (`apps/<appId>/cloud`). */
export const treeFolder = (appFolder: string): string => path.join(appFolder, 'cloud');

/** The file system location of a tree path (already checked by `parseTreePath`). */
export const onDisk = (tree: string, treePath: string): string => (treePath === '' ? tree : path.join(tree, ...treePath.split('/')));

/** `a/b/c` → `['a', 'a/b']`: the folders that hold a tree path, outermost first. */
export function ancestorsOf(treePath: string): string[] {
  const parts = treePath.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** True when `treePath` is `cloud` or `public` itself. */
export const isRoot = (treePath: string): boolean => (CLOUD_ROOTS as readonly string[]).includes(treePath);

/** A checked path inside the tree. */
export interface TreePath {
  /** Normalised: no trailing `/`; `''` only for the whole tree. */
  path: string;
  /** The root it lies under; undefined for the whole tree. */
  root: CloudRoot | undefined;
  /** The caller ended it with `/` (accepted where a folder may be meant: reads and deletes). */
  trailingSlash: boolean;
}

const quote = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);

/**
 * Checks a caller's path before any file is touched (docs/design.md, "Security stance").
 * A path is relative and `/`-separated, with no `.` or `..` segment, no empty segment, no NUL or
 * other control character and no backslash, at most 1024 characters and 255 bytes per segment, and
 * lies under `cloud/` or `public/` (or is one of them).
 *
 * @param raw the caller's path; `''` is the whole tree when `options.emptyIsTree`.
 * @param options.field how messages name the path, e.g. `changes[2].path`.
 * @param options.trailingSlash whether one trailing `/` is accepted (and dropped): for reads and deletes.
 * @throws ManagementError(invalid) (400) naming the field and what is wrong with the path;
 *   ManagementError(forbidden) (403) when it is well formed but outside `cloud/` and `public/`.
 */
export function parseTreePath(
  raw: string,
  options: { field: string; emptyIsTree?: boolean; trailingSlash?: boolean },
): TreePath {
  const { field } = options;
  if (raw === '' || (options.emptyIsTree && raw === '/')) {
    if (options.emptyIsTree) return { path: '', root: undefined, trailingSlash: false };
    throw invalid(`${field} is empty. Give a path under cloud/ or public/, e.g. cloud/main.js.`);
  }
  if (raw.includes('\0')) throw invalid(`${field} ${quote(raw)} contains a NUL character, which no path may hold.`);
  if (/[\u0001-\u001f\u007f]/.test(raw)) throw invalid(`${field} ${quote(raw)} contains a control character (such as a newline or tab), which no path may hold.`);
  if (raw.includes('\\')) throw invalid(`${field} ${quote(raw)} contains a backslash. Separate folders with /, e.g. cloud/todo/functions/hello.js.`);
  if (raw.startsWith('/')) {
    throw invalid(`${field} ${quote(raw)} is absolute. Give it relative to the cloud code tree, without the leading /, e.g. ${raw.replace(/^\/+/, '') || 'cloud/main.js'}.`);
  }
  if ([...raw].length > MAX_PATH_CHARS) throw invalid(`${field} is ${[...raw].length} characters long; a path may have at most ${MAX_PATH_CHARS}.`);
  let text = raw;
  let trailingSlash = false;
  if (text.endsWith('/') && !text.endsWith('//')) {
    if (!options.trailingSlash) throw invalid(`${field} ${quote(raw)} ends with /, but a write needs a file path such as cloud/main.js.`);
    text = text.slice(0, -1);
    trailingSlash = true;
  }
  const segments = text.split('/');
  if (segments.some((s) => s === '')) throw invalid(`${field} ${quote(raw)} has an empty segment (// or a trailing /). Write each folder name once, separated by a single /.`);
  if (segments.some((s) => s === '.' || s === '..')) {
    throw invalid(`${field} ${quote(raw)} has a "." or ".." segment. Give the path from the tree's root without them, e.g. cloud/todo/functions/hello.js.`);
  }
  const long = segments.find((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES);
  if (long !== undefined) throw invalid(`${field} has a segment of ${Buffer.byteLength(long)} bytes; a file or folder name may have at most ${MAX_SEGMENT_BYTES}.`);
  const first = segments[0]!;
  if (!isRoot(first)) {
    throw forbidden(`${field} ${quote(raw)} is outside the cloud code tree: every path starts with cloud/ (server code) or public/ (static files).`);
  }
  return { path: segments.join('/'), root: first as CloudRoot, trailingSlash };
}

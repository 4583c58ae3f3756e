import fs from 'node:fs';
import { CLOUD_ROOTS, DEPENDENCIES_FOLDER, onDisk } from './paths.js';

/**
 * What the cloud code tree holds, by tree path (`cloud/main.js`): files with their sizes in bytes,
 * and folders. The roots `cloud` and `public` are always listed as folders, even before they exist
 * on disk (an app made before cloud code existed has none). Symbolic links and other special files
 * are left out: nothing follows them. So is `cloud/node_modules`, the installed dependencies
 * (dependencies.ts), which no deploy writes and no tree limit counts.
 */
export interface TreeState {
  files: Map<string, number>;
  folders: Set<string>;
}

/** Reads the tree's files and folders from disk (names only and sizes, not contents). */
export function scanTree(tree: string): TreeState {
  const state: TreeState = { files: new Map(), folders: new Set(CLOUD_ROOTS) };
  const walk = (treePath: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(onDisk(tree, treePath), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const child = `${treePath}/${entry.name}`;
      if (child === DEPENDENCIES_FOLDER) continue;
      if (entry.isDirectory()) {
        state.folders.add(child);
        walk(child);
      } else if (entry.isFile()) {
        state.files.set(child, fs.statSync(onDisk(tree, child)).size);
      }
    }
  };
  for (const root of CLOUD_ROOTS) walk(root);
  return state;
}

/** The kind of thing at a tree path, without following symbolic links. */
export function kindAt(tree: string, treePath: string): 'file' | 'folder' | undefined {
  try {
    const stat = fs.lstatSync(onDisk(tree, treePath));
    return stat.isFile() ? 'file' : stat.isDirectory() ? 'folder' : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** Whether `treePath` lies inside the folder `folder` (not the folder itself). */
export const isInside = (treePath: string, folder: string): boolean => treePath.startsWith(`${folder}/`);

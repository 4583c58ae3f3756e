import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ancestorsOf, isRoot, onDisk } from './paths.js';
import type { DeployPlan } from './plan.js';
import { isInside, type TreeState } from './tree.js';

/** Prefix of the staging folders a deploy makes in the app's folder (outside the tree, never served). */
export const STAGING_PREFIX = '.cloud-deploy-';

/** Test hook: called before each step of the commit, numbered from 0; throwing there simulates a failure. */
export type StepHook = (step: number, description: string) => void;

/** Writes a file and flushes it to disk before returning. */
function writeDurably(file: string, content: Buffer): void {
  const fd = fs.openSync(file, 'wx', 0o644);
  try {
    let offset = 0;
    while (offset < content.length) offset += fs.writeSync(fd, content, offset, content.length - offset);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Flushes a folder's entries (renames into and out of it) to disk; best effort where unsupported. */
function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(folder, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a folder; the renames are then as durable as they can be.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Removes staging folders left by a deploy that was interrupted (the process died mid-way). */
export function removeStaleStaging(appFolder: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(appFolder);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(STAGING_PREFIX)) fs.rmSync(path.join(appFolder, name), { recursive: true, force: true });
}

/**
 * Makes the tree on disk match `plan`, all or nothing. New contents are first
 * written to a staging folder in the app's folder (same file system) and flushed; then files and
 * folders that go away are moved into the staging folder as backups (replaced files are hard-linked
 * there), needed folders are made and the new files renamed into place. If any step fails, every step done is
 * undone in reverse order, so the tree is as it was; the backups are deleted only once all steps
 * have succeeded.
 *
 * @param appFolder `apps/<appId>/`, which holds the tree `apps/<appId>/cloud/`.
 * @param before the tree on disk, as `scanTree` read it (the caller holds the app's deploy lock).
 * @throws the file system's error when a step fails (after undoing the others).
 */
export function applyPlan(appFolder: string, tree: string, before: TreeState, plan: DeployPlan, onStep?: StepHook): void {
  // What goes away: outermost removed folders (with what they hold), and files outside them.
  const goneFolders = [...before.folders].filter((d) => !plan.folders.has(d));
  const topGone = goneFolders.filter((d) => !ancestorsOf(d).some((a) => goneFolders.includes(a)));
  const goneFiles = [...before.files.keys()].filter((f) => !plan.files.has(f) && !topGone.some((d) => isInside(f, d)));
  // Roots are always listed in `before`, even when missing on disk (an app made before cloud code).
  const newFolders = [...plan.folders].filter((d) => !before.folders.has(d) || (isRoot(d) && !fs.existsSync(onDisk(tree, d))));
  newFolders.sort((a, b) => a.split('/').length - b.split('/').length);
  const writes = [...plan.files].filter(([, f]) => f.content !== undefined) as Array<[string, { size: number; content: Buffer }]>;
  if (topGone.length + goneFiles.length + newFolders.length + writes.length === 0) return;

  removeStaleStaging(appFolder);
  const staging = path.join(appFolder, `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
  const fresh = path.join(staging, 'new');
  const backups = path.join(staging, 'old');
  fs.mkdirSync(tree, { recursive: true });
  fs.mkdirSync(fresh, { recursive: true });
  fs.mkdirSync(backups);
  const undo: Array<() => void> = [];
  const touched = new Set<string>();
  let step = 0;
  let backupCount = 0;
  const run = (description: string, action: () => void, reverse: () => void) => {
    onStep?.(step++, description);
    action();
    undo.push(reverse);
  };
  const moveAway = (treePath: string) => {
    const target = onDisk(tree, treePath);
    const backup = path.join(backups, String(backupCount++));
    run(`move ${treePath} away`, () => fs.renameSync(target, backup), () => fs.renameSync(backup, target));
    touched.add(path.dirname(target));
  };

  try {
    writes.forEach(([, file], i) => writeDurably(path.join(fresh, String(i)), file.content));
    for (const d of topGone) moveAway(d);
    for (const f of goneFiles) moveAway(f);
    for (const d of newFolders) {
      const target = onDisk(tree, d);
      run(`make folder ${d}`, () => fs.mkdirSync(target), () => fs.rmdirSync(target));
      touched.add(path.dirname(target));
    }
    writes.forEach(([treePath], i) => {
      const target = onDisk(tree, treePath);
      const staged = path.join(fresh, String(i));
      if (before.files.has(treePath)) {
        // Replaced: a hard link keeps the old content as a backup, and the rename swaps the new one in
        // atomically, so readers (the worker, web hosting) never find the file missing.
        const backup = path.join(backups, String(backupCount++));
        run(`back up ${treePath}`, () => fs.linkSync(target, backup), () => fs.rmSync(backup, { force: true }));
        run(`write ${treePath}`, () => fs.renameSync(staged, target), () => fs.renameSync(backup, target));
      } else {
        run(`write ${treePath}`, () => fs.renameSync(staged, target), () => fs.renameSync(target, staged));
      }
      touched.add(path.dirname(target));
    });
  } catch (error) {
    let restored = true;
    for (const reverse of undo.reverse()) {
      try {
        reverse();
      } catch {
        restored = false; // keep undoing the rest; the staging folder keeps what could not be put back
      }
    }
    if (restored) fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  for (const folder of touched) syncFolder(folder);
  fs.rmSync(staging, { recursive: true, force: true });
}

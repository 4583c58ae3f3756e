import path from 'node:path';
import { CLOUD_ENTRY } from './paths.js';

/** Extensions tried, in order, for a relative `require` without one (Node's CommonJS resolution). */
const TRIED = ['', '.js', '.cjs', '.mjs', '.json', '/index.js', '/index.cjs', '/index.json'];

/**
 * The tree path a relative specifier of `from` names, if that file exists: `./x` from
 * `cloud/main.js` is `cloud/x`, `cloud/x.js`, ... or `cloud/x/index.js`. Bare names (`parse`,
 * `node:fs`) and paths that leave `cloud/` resolve to nothing.
 */
export function resolveRelative(from: string, specifier: string, exists: (treePath: string) => boolean): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)).replace(/\/+$/, '');
  if (!base.startsWith('cloud/')) return undefined;
  return TRIED.map((suffix) => base + suffix).find(exists);
}

/**
 * The cloud files that run when the worker loads `cloud/main.js`: the entry and every file reached
 * from it through relative `require`s and `import`s, directly or through other files (spec, rule 2).
 *
 * @param specifiersOf the module specifiers a file names (see `moduleSpecifiers`).
 * @param exists whether a tree path is a file after the deploy.
 */
export function reachableFromEntry(specifiersOf: (treePath: string) => string[], exists: (treePath: string) => boolean): Set<string> {
  const reached = new Set<string>();
  if (!exists(CLOUD_ENTRY)) return reached;
  const queue = [CLOUD_ENTRY];
  reached.add(CLOUD_ENTRY);
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (file.endsWith('.json')) continue;
    for (const specifier of specifiersOf(file)) {
      const target = resolveRelative(file, specifier, exists);
      if (target && !reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  return reached;
}

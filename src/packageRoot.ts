import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding Backyard's `package.json`, found by walking up from this module, so that the
 * same code finds `guides/` whether it runs from `src/` (tests) or `dist/src/` (the built command).
 */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate) && JSON.parse(fs.readFileSync(candidate, 'utf8')).name === 'backyard') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('Backyard cannot find its own package.json.');
    dir = parent;
  }
}

import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from './packageRoot.js';

let version: string | undefined;

/** Backyard's version, from its package.json. */
export function packageVersion(): string {
  version ??= JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')).version as string;
  return version;
}

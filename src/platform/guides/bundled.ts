import path from 'node:path';
import { packageRoot } from '../../packageRoot.js';
import { GuideService } from './service.js';

let bundled: GuideService | undefined;

/** The guides shipped in the package's `guides/` folder, read once per process. */
export function bundledGuides(): GuideService {
  bundled ??= new GuideService(path.join(packageRoot(), 'guides'));
  return bundled;
}

import fs from 'node:fs';
import path from 'node:path';
import { operations } from '../../tools/index.js';
import { packageRoot } from '../packageRoot.js';
import { packageVersion } from '../version.js';
import { openApiSnapshot, withSettingsTable, withToolsTable } from './generate.js';

// `npm run docs`: regenerates docs/openapi.json, the README's tool table (from the operation table) and its
// configuration table (from src/settings.ts).
const root = packageRoot();
fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
fs.writeFileSync(path.join(root, 'docs', 'openapi.json'), openApiSnapshot(operations, packageVersion()));
const readme = path.join(root, 'README.md');
fs.writeFileSync(readme, withSettingsTable(withToolsTable(fs.readFileSync(readme, 'utf8'), operations)));
process.stdout.write('docs/openapi.json and the README tool and configuration tables are up to date.\n');

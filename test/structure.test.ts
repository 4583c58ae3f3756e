/**
 * The layering rules a code review named (issue 16, "Structure"), checked on the import specifiers
 * of every module under src/ (static imports, re-exports and dynamic imports), so that an import
 * that breaks one fails here with the file and the specifier.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');

function* modules(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* modules(full);
    else if (/\.c?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield full;
  }
}

/** Each module's relative imports, resolved to repository paths (`src/platform/ids.ts`). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm;
  for (const match of text.matchAll(pattern)) {
    const target = path.resolve(path.dirname(file), match[2]!).replace(/\.c?js$/, '.ts');
    found.push(path.relative(ROOT, target).split(path.sep).join('/'));
  }
  return found;
}

const graph = [...modules(SRC)].map((file) => ({ file: path.relative(ROOT, file).split(path.sep).join('/'), imports: importsOf(file) }));

/** `from` → `to` edges that break a rule: modules matching `from` must not import modules matching `to`. */
function violations(from: RegExp, to: RegExp): string[] {
  return graph.filter((m) => from.test(m.file)).flatMap((m) => m.imports.filter((i) => to.test(i)).map((i) => `${m.file} imports ${i}`));
}

describe('module layering', () => {
  it('reads the imports it checks', () => {
    // The checker itself: a file known to import the platform is seen doing so.
    expect(graph.find((m) => m.file === 'src/serve.ts')?.imports).toEqual(expect.arrayContaining(['src/mcp/http.ts', 'src/server/http.ts']));
    expect(graph.length).toBeGreaterThan(100);
  });

  it('src/data imports nothing from src/platform (nor from the front ends)', () => {
    expect(violations(/^src\/data\//, /^src\/(platform|server|mcp|api)\//)).toEqual([]);
  });

  it('src/config.ts and src/settings.ts import nothing above them (only src/shared)', () => {
    expect(violations(/^src\/(config|settings)\.ts$/, /^(src\/(?!shared\/|settings\.ts$)|tools\/)/)).toEqual([]);
  });

  it('src/shared is a leaf', () => {
    expect(violations(/^src\/shared\//, /^(src\/(?!shared\/)|tools\/)/)).toEqual([]);
  });

  it('src/mcp and src/server do not import each other', () => {
    expect(violations(/^src\/mcp\//, /^src\/server\//)).toEqual([]);
    expect(violations(/^src\/server\//, /^src\/mcp\//)).toEqual([]);
  });

  it('domain services in src/platform know nothing of the front ends', () => {
    expect(violations(/^src\/platform\//, /^src\/(server|mcp|api)\//)).toEqual([]);
  });
});

describe('services as interfaces', () => {
  const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
  const platformFiles = graph.map((m) => m.file).filter((f) => f.startsWith('src/platform/'));
  /** The classes that implement an area's interface of src/platform/services.ts (`class X implements YOperations`). */
  const implementations = platformFiles.flatMap((f) => [...read(f).matchAll(/export class (\w+) implements (?:[\w, ]*\b)?\w+Operations\b/g)].map((m) => m[1]!));
  const frontEnds = [
    ...graph.map((m) => m.file).filter((f) => /^src\/(server|mcp|api)\//.test(f) || /^src\/(cli|cliSchedules|serve)\.ts$/.test(f)),
    ...[...modules(path.join(ROOT, 'tools'))].map((f) => path.relative(ROOT, f).split(path.sep).join('/')),
  ];

  it('finds the implementations it checks', () => {
    expect(implementations).toEqual(expect.arrayContaining(['AccountService', 'BackendAppService', 'DevEnvService', 'WebAppService', 'RepoHostService', 'OAuthService', 'DashboardSessions']));
    expect(frontEnds).toEqual(expect.arrayContaining(['src/server/http.ts', 'src/mcp/http.ts', 'tools/operation.ts']));
  });

  it('tools and front ends name the services by their interfaces, never by their classes', () => {
    const named = new RegExp(`\\b(${implementations.join('|')})\\b`);
    const found = frontEnds.flatMap((f) =>
      [...read(f).matchAll(/^\s*import\s[^;]*?from\s*['"][^'"]+['"]/gms)].filter((m) => named.test(m[0])).map((m) => `${f}: ${m[0].replace(/\s+/g, ' ')}`),
    );
    expect(found).toEqual([]);
  });
});

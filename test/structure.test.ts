/**
 * The layering rules a code review named, checked on the import specifiers
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

/**
 * The import cycles among the modules matching `scope`, each as one circle of paths
 * (`a.ts -> b.ts -> a.ts`), found by Tarjan's strongly connected components over the edges inside
 * the scope. Type-only imports count: a module that needs another's types depends on it all the same.
 */
function cycles(scope: RegExp): string[] {
  const edges = new Map(graph.filter((m) => scope.test(m.file)).map((m) => [m.file, [...new Set(m.imports.filter((i) => scope.test(i)))]]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || edges.get(file)!.includes(file)) found.push(circle(component, edges));
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** One circle through a strongly connected component, for the failure message. */
function circle(component: string[], edges: Map<string, string[]>): string {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const path = [start];
  const seen = new Set([start]);
  // A shortest way back to `start`, breadth first inside the component.
  const back = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const at = queue.shift()!;
    const next = edges.get(at)!.filter((n) => members.has(n));
    if (next.includes(start)) {
      const way: string[] = [];
      for (let step: string | undefined = at; step !== undefined && step !== start; step = back.get(step)) way.unshift(step);
      return [...path, ...way, start].join(' -> ');
    }
    for (const n of next) if (!seen.has(n)) (seen.add(n), back.set(n, at), queue.push(n));
  }
  return component.join(', ');
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

  it('finds an import cycle when there is one', () => {
    // The detector itself, on a graph made for it: a -> b -> c -> a, and d alone.
    const saved = graph.splice(0, graph.length, ...[
      { file: 'x/a.ts', imports: ['x/b.ts'] },
      { file: 'x/b.ts', imports: ['x/c.ts', 'y/d.ts'] },
      { file: 'x/c.ts', imports: ['x/a.ts'] },
      { file: 'x/d.ts', imports: ['x/a.ts'] },
    ]);
    try {
      expect(cycles(/^x\//)).toEqual(['x/a.ts -> x/b.ts -> x/c.ts -> x/a.ts']);
      expect(cycles(/^x\/[abd]/)).toEqual([]);
    } finally {
      graph.splice(0, graph.length, ...saved);
    }
  });

  it('no import cycle inside src/data, nor inside any folder of it', () => {
    // The whole of src/data covers every folder in it: a cycle inside a folder is one of src/data.
    expect(cycles(/^src\/data\//)).toEqual([]);
  });

  it('route modules do not build a master view of their own', () => {
    // The compiler keeps them out of the app's: DataRequest gives them the checking engine, the
    // services and DataApps without `store` (rest/types.ts), and every function that takes a store
    // needs one to be called. Nor may they make one: no store.ts, no storage adapter.
    expect(violations(/^src\/data\/rest\/routes\//, /^src\/data\/(store\.ts|storage\/(sqlite|postgres)\/|storage\/provider\.ts)/)).toEqual([]);
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

/**
 * Comments cite what a reader can open: the design decisions they name are in the repository
 * (docs/design.md), as a section heading (`docs/design.md, "State"`) or a numbered decision
 * (`docs/design.md, decision 3`), and each one cited is there.
 */
describe('citations of docs/design.md', () => {
  const design = fs.readFileSync(path.join(ROOT, 'docs/design.md'), 'utf8');
  const headings = new Set([...design.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim()));
  const decisions = new Set([...design.slice(design.indexOf('## Decisions')).matchAll(/^(\d+)\. /gm)].map((m) => Number(m[1])));
  const sources = ['src', 'tools', 'bench', 'test'].flatMap((dir) => [...modules(path.join(ROOT, dir))]);
  /** A file's text with comment line breaks joined, so that a citation wrapped over two lines reads as one. */
  const joined = (file: string) => fs.readFileSync(file, 'utf8').replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ');
  const cited = sources.flatMap((file) =>
    [...joined(file).matchAll(/(\S*)design\.md(,? ?(?:"([^"]+)"|decision (\d+)|URL table))?/g)].map((m) => ({
      file: path.relative(ROOT, file),
      text: m[0],
      inRepository: m[1]!.endsWith('docs/'),
      heading: m[3],
      decision: m[4] === undefined ? undefined : Number(m[4]),
    })),
  );

  it('finds the headings, decisions and citations it checks', () => {
    expect([...headings]).toEqual(expect.arrayContaining(['State', 'Security stance', 'URL table', 'Lifecycle operations']));
    expect([...decisions]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(cited.length).toBeGreaterThan(50);
    expect(cited.filter((c) => c.heading !== undefined).length).toBeGreaterThan(20);
  });

  it('every citation is of docs/design.md and names a section or decision that it holds', () => {
    const wrong = cited.filter((c) => !c.inRepository || (c.heading !== undefined && !headings.has(c.heading)) || (c.decision !== undefined && !decisions.has(c.decision)));
    expect(wrong.map((c) => `${c.file}: ${c.text}`)).toEqual([]);
  });
});

import * as acorn from 'acorn';

/**
 * Reading JavaScript source without running it: syntax errors, and the modules a
 * file requires or imports.
 */

/** A syntax error: 1-based line and column, and acorn's message without its `(line:column)` tail. */
export interface SyntaxProblem {
  line: number;
  column: number;
  message: string;
}

export interface ParsedJavaScript {
  program?: acorn.Program;
  error?: SyntaxProblem;
}

/**
 * Parses `source` as a script (as cloud code's `require` loads it) and, when that fails, as a
 * module, with the newest syntax acorn knows (`ecmaVersion: 'latest'`; `return` outside a function
 * is refused). When both fail, the error reported is the one found further into the file, so that
 * a module's `import` line does not hide the real mistake.
 */
export function parseJavaScript(source: string): ParsedJavaScript {
  const attempt = (sourceType: 'script' | 'module') => {
    try {
      return { program: acorn.parse(source, { ecmaVersion: 'latest', sourceType, locations: true, allowHashBang: true }) };
    } catch (error) {
      const e = error as SyntaxError & { pos?: number; loc?: { line: number; column: number } };
      return {
        pos: e.pos ?? 0,
        error: {
          line: e.loc?.line ?? 1,
          column: (e.loc?.column ?? 0) + 1,
          message: String(e.message).replace(/\s*\(\d+:\d+\)$/, ''),
        },
      };
    }
  };
  const script = attempt('script');
  if (script.program) return { program: script.program };
  const module = attempt('module');
  if (module.program) return { program: module.program };
  return { error: (module.pos ?? 0) > (script.pos ?? 0) ? module.error : script.error };
}

/** Calls `visit` on every AST node under `node` (a plain walk over child objects). */
function walk(node: unknown, visit: (node: acorn.Node & Record<string, unknown>) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
    return;
  }
  if (node === null || typeof node !== 'object' || typeof (node as { type?: unknown }).type !== 'string') return;
  visit(node as acorn.Node & Record<string, unknown>);
  for (const [key, value] of Object.entries(node)) {
    if (key !== 'loc' && value !== null && typeof value === 'object') walk(value, visit);
  }
}

const stringLiteral = (node: unknown): string | undefined => {
  const n = node as { type?: string; value?: unknown; quasis?: Array<{ value: { cooked?: string } }>; expressions?: unknown[] } | undefined;
  if (n?.type === 'Literal' && typeof n.value === 'string') return n.value;
  if (n?.type === 'TemplateLiteral' && n.expressions?.length === 0) return n.quasis?.[0]?.value.cooked ?? undefined;
  return undefined;
};

/** Fallback for files that do not parse: `require('x')`, `import 'x'`, `from 'x'`, `import('x')`. */
const SPECIFIER_PATTERN = /\brequire\s*\(\s*(['"`])([^'"`\n]+)\1\s*\)|\bimport\s*(?:\(\s*)?(['"`])([^'"`\n]+)\3|\bfrom\s*(['"])([^'"\n]+)\5/g;

/**
 * The module specifiers a file names, in order: `require('./x')` and `require("./x.js")` with a
 * constant string, `import ... from './x.js'`, `import './x.js'`, `export ... from`, and
 * `import('./x.js')`. Comments and strings are not mistaken for them when the file parses; when it
 * does not, a pattern match over the text is used instead.
 */
export function moduleSpecifiers(source: string, parsed: ParsedJavaScript = parseJavaScript(source)): string[] {
  if (!parsed.program) return [...source.matchAll(SPECIFIER_PATTERN)].map((m) => m[2] ?? m[4] ?? m[6]!);
  const found: string[] = [];
  walk(parsed.program, (node) => {
    switch (node.type) {
      case 'CallExpression': {
        const callee = node.callee as { type: string; name?: string };
        const first = (node.arguments as unknown[])[0];
        if (callee.type === 'Identifier' && callee.name === 'require' && stringLiteral(first) !== undefined) found.push(stringLiteral(first)!);
        break;
      }
      case 'ImportExpression':
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration': {
        const specifier = stringLiteral(node.source);
        if (specifier !== undefined) found.push(specifier);
        break;
      }
    }
  });
  return found;
}

/** True for the data SDK's module names: `parse`, `parse/node`, `parse/node.js`, `parse/...`. */
export const isSdkSpecifier = (specifier: string): boolean => specifier === 'parse' || specifier.startsWith('parse/');

/** File names that cloud code loads as JavaScript. */
export const isJavaScriptFile = (treePath: string): boolean => /\.(c|m)?js$/i.test(treePath);

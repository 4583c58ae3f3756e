import { isJavaScriptFile, isSdkSpecifier, moduleSpecifiers, parseJavaScript, type ParsedJavaScript } from './javascript.js';
import { CLOUD_ENTRY } from './paths.js';
import { publicWarnings } from './publicChecks.js';
import { reachableFromEntry } from './requires.js';

/** The tree after a deploy, as the checks see it. */
export interface DeployedTree {
  /** Every file after the deploy (tree paths). */
  files: readonly string[];
  /** Files the deploy wrote. */
  written: ReadonlySet<string>;
  /** Files the deploy created (did not exist before). */
  created: ReadonlySet<string>;
  /** The text of a file after the deploy. */
  read(treePath: string): string;
}

export interface DeployWarnings {
  warnings: string[];
  /** Cloud files that do not parse: while there is one, the worker is not reloaded. */
  syntaxErrors: number;
}

const belowCloud = (p: string) => p.slice('cloud/'.length);

/**
 * What a deploy should tell its caller about the tree it left, in this order:
 * - a syntax error in any JavaScript file under `cloud/` (file, line and column);
 * - JavaScript files under `cloud/` but no `cloud/main.js` to load them;
 * - a new JavaScript file under `cloud/` that `cloud/main.js` does not reach through `require` or
 *   `import`, directly or through other files (spec, rule 2: it would never run);
 * - a written file under `cloud/` that requires or imports the data SDK (`parse`, `parse/node`),
 *   although `Parse` is a global there (rule 2);
 * - a written `public/` page or script that uses `Parse` without loading `{sdk_script_url}`, or
 *   that initialises it before the SDK has loaded (rule 3; see `publicChecks.ts`).
 */
export function deployWarnings(tree: DeployedTree, sdkScriptUrl: string): DeployWarnings {
  const warnings: string[] = [];
  const exists = new Set(tree.files);
  const cloudScripts = tree.files.filter((p) => p.startsWith('cloud/') && isJavaScriptFile(p)).sort();
  const parsed = new Map<string, ParsedJavaScript & { source: string }>();
  const parse = (p: string) => {
    let entry = parsed.get(p);
    if (!entry) {
      const source = tree.read(p);
      entry = { ...parseJavaScript(source), source };
      parsed.set(p, entry);
    }
    return entry;
  };

  let syntaxErrors = 0;
  for (const p of cloudScripts) {
    const { error } = parse(p);
    if (!error) continue;
    syntaxErrors++;
    warnings.push(
      `${p} has a syntax error at line ${error.line}, column ${error.column}: ${error.message}. The files were saved, but the cloud code was not reloaded, so the previous version keeps running until you fix this file and deploy again.`,
    );
  }

  const specifiersOf = (p: string) => {
    const entry = parse(p);
    return moduleSpecifiers(entry.source, entry);
  };
  if (!exists.has(CLOUD_ENTRY) && cloudScripts.length > 0) {
    warnings.push(`There is no ${CLOUD_ENTRY}, so no cloud code runs. Write ${CLOUD_ENTRY} with a require line for each file to load.`);
  } else {
    const reached = reachableFromEntry(specifiersOf, (p) => exists.has(p));
    for (const p of [...tree.created].filter((f) => cloudScripts.includes(f) && f !== CLOUD_ENTRY).sort()) {
      if (reached.has(p)) continue;
      warnings.push(
        `${p} is new, but ${CLOUD_ENTRY} does not require it, so it never runs. Append require('./${belowCloud(p)}'); to ${CLOUD_ENTRY} (writeMode "append").`,
      );
    }
  }

  for (const p of cloudScripts.filter((f) => tree.written.has(f))) {
    const sdk = [...new Set(specifiersOf(p).filter(isSdkSpecifier))];
    if (sdk.length === 0) continue;
    warnings.push(
      `${p} requires the data SDK (${sdk.map((s) => `"${s}"`).join(', ')}). Remove that require or import: in cloud code Parse is already a global, set up for this app.`,
    );
  }

  warnings.push(...publicWarnings(tree.written, tree.files.filter((p) => p.startsWith('public/')), tree.read, sdkScriptUrl));
  return { warnings, syntaxErrors };
}

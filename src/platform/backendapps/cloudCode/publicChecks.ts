import path from 'node:path';

/**
 * Checks of `public/` pages against the spec's rule 3 for deployCloudCode: a page that uses the data
 * SDK loads it from `{sdk_script_url}` and initialises it only after that script has loaded.
 *
 * The checks read the text, they do not run it, and are kept simple on purpose:
 * - code "uses the SDK" when it contains `Parse.<name>`;
 * - a page "loads the SDK" when it has a `<script src>` whose address is `{sdk_script_url}`, or
 *   another absolute http(s) address ending in `/sdk/parse.min.js` (a Backyard at another address);
 * - `Parse.initialize` is "after the SDK has loaded" when, in the script that calls it, a `load` or
 *   `DOMContentLoaded` handler (`addEventListener('load', ...)`, `onload = ...`, jQuery's `$(...)`
 *   or `.ready(...)`) is registered before the call; or the page has `<body onload>` or an `onload`
 *   on the SDK's tag; or the SDK's tag has no `async` or `defer` and the calling script comes after
 *   it (or is a module script, which runs after the page is parsed);
 * - a `.js` file under `public/` is checked through the pages of `public/` that load it by a
 *   relative or `/`-rooted `src`.
 */

/** One `<script>` element of a page, in document order. */
export interface ScriptTag {
  src: string | undefined;
  /** The inline code (empty for a `src` script). */
  code: string;
  async: boolean;
  defer: boolean;
  module: boolean;
  hasOnload: boolean;
  order: number;
}

const decodeEntities = (s: string) =>
  s.replace(/&quot;/g, '"').replace(/&#39;|&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function attributes(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of text.matchAll(/([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g)) {
    const name = m[1]!.toLowerCase();
    if (!found.has(name)) found.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return found;
}

/** The `<script>` elements of an HTML page, comments left out. */
export function scriptTags(html: string): ScriptTag[] {
  const text = html.replace(/<!--[\s\S]*?-->/g, '');
  return [...text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)].map((m, order) => {
    const attrs = attributes(m[1] ?? '');
    const src = attrs.get('src');
    return {
      src: src === undefined ? undefined : src.trim(),
      code: src === undefined ? (m[2] ?? '') : '',
      async: attrs.has('async'),
      defer: attrs.has('defer'),
      module: (attrs.get('type') ?? '').trim().toLowerCase() === 'module',
      hasOnload: attrs.has('onload'),
      order,
    };
  });
}

/** Whether code uses the data SDK: it contains `Parse.<name>`. */
export const usesParse = (code: string): boolean => /\bParse\s*\.\s*[A-Za-z_$]/.test(code);
/** Whether code calls `Parse.initialize(`. */
export const callsInitialize = (code: string): boolean => /\bParse\s*\.\s*initialize\s*\(/.test(code);

const LOAD_HANDLER = /addEventListener\s*\(\s*['"`](?:load|DOMContentLoaded)['"`]|\bonload\s*=|\$\s*\(\s*(?:function\b|\(|async\b|document\b|window\b)|\.ready\s*\(/;

/** Whether the code registers a load handler before its first `Parse.initialize(` call. */
export function initialisesInLoadHandler(code: string): boolean {
  const call = code.search(/\bParse\s*\.\s*initialize\s*\(/);
  const handler = code.search(LOAD_HANDLER);
  return call >= 0 && handler >= 0 && handler < call;
}

/** Whether a script address is the data SDK's (see the module comment). */
export function isSdkAddress(src: string, sdkScriptUrl: string): boolean {
  return src === sdkScriptUrl || /^https?:\/\/[^/?#]+(?:\/[^?#]*)?\/sdk\/parse\.min\.js(?:[?#].*)?$/i.test(src);
}

/** The tree path a page's script address names under `public/`, or undefined (another site, or outside). */
export function resolveScriptPath(pagePath: string, src: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(src) || src.startsWith('//')) return undefined;
  let clean = src.replace(/[?#].*$/, '');
  try {
    clean = decodeURIComponent(clean);
  } catch {
    return undefined;
  }
  if (clean === '') return undefined;
  const joined = clean.startsWith('/') ? `public${clean}` : path.posix.join(path.posix.dirname(pagePath), clean);
  const normal = path.posix.normalize(joined);
  return normal.startsWith('public/') ? normal : undefined;
}

/** What a page tells about loading the SDK. */
interface PageFacts {
  sdk: ScriptTag | undefined;
  bodyOnload: boolean;
  tags: ScriptTag[];
}

const factsOf = (html: string, sdkScriptUrl: string): PageFacts => {
  const tags = scriptTags(html);
  return {
    tags,
    sdk: tags.find((t) => t.src !== undefined && isSdkAddress(t.src, sdkScriptUrl)),
    bodyOnload: /<body\b[^>]*\bonload\s*=/i.test(html.replace(/<!--[\s\S]*?-->/g, '')),
  };
};

/** Whether `tag`, on a page that loads the SDK, runs after the SDK has loaded (see the module comment). */
const runsAfterSdk = (page: PageFacts, tag: ScriptTag): boolean => {
  const sdk = page.sdk;
  if (!sdk) return false;
  if (page.bodyOnload || sdk.hasOnload) return true;
  if (sdk.async || sdk.defer || sdk.module) return false;
  return sdk.order < tag.order || tag.module || (tag.src !== undefined && tag.defer);
};

const isPage = (p: string) => /\.html?$/i.test(p);
const isScript = (p: string) => /\.(m)?js$/i.test(p);

/**
 * The rule-3 warnings for the `public/` files a deploy wrote.
 * @param written tree paths written by the deploy (only those under `public/` are checked).
 * @param publicFiles every file under `public/` after the deploy.
 * @param read the text of a file after the deploy.
 * @param sdkScriptUrl `{sdk_script_url}`, e.g. `http://localhost:4000/sdk/parse.min.js`.
 */
export function publicWarnings(written: Iterable<string>, publicFiles: readonly string[], read: (treePath: string) => string, sdkScriptUrl: string): string[] {
  const warnings: string[] = [];
  const addTag = `<script src="${sdkScriptUrl}"></script>`;
  const lateInit = (p: string) =>
    `${p} calls Parse.initialize before the data SDK has loaded. Place the SDK's tag ${addTag} (without async or defer) before the script that calls it, or call Parse.initialize inside window.addEventListener('load', () => { ... }).`;
  let pages: Array<[string, PageFacts]> | undefined;
  const allPages = () => (pages ??= publicFiles.filter(isPage).map((p) => [p, factsOf(read(p), sdkScriptUrl)]));

  for (const file of [...written].filter((p) => p.startsWith('public/')).sort()) {
    if (isPage(file)) {
      const page = factsOf(read(file), sdkScriptUrl);
      const inline = page.tags.filter((t) => t.src === undefined);
      if (!inline.some((t) => usesParse(t.code))) continue;
      if (!page.sdk) {
        warnings.push(`${file} uses Parse but does not load the data SDK from ${sdkScriptUrl}. Add ${addTag} before the scripts that use Parse.`);
        continue;
      }
      const early = inline.find((t) => callsInitialize(t.code) && !initialisesInLoadHandler(t.code) && !runsAfterSdk(page, t));
      if (early) warnings.push(lateInit(file));
    } else if (isScript(file)) {
      const code = read(file);
      if (!usesParse(code)) continue;
      const loaders = allPages().flatMap(([pagePath, page]) =>
        page.tags.filter((t) => t.src !== undefined && resolveScriptPath(pagePath, t.src) === file).map((tag) => ({ page, tag })),
      );
      const withSdk = loaders.filter(({ page }) => page.sdk);
      if (withSdk.length === 0) {
        const name = file.slice('public/'.length);
        warnings.push(
          `${file} uses Parse, but no HTML page in public/ loads both the data SDK (${sdkScriptUrl}) and this script. Add ${addTag} followed by <script src="/${name}"></script> to the page that uses it.`,
        );
        continue;
      }
      if (callsInitialize(code) && !initialisesInLoadHandler(code) && !withSdk.some(({ page, tag }) => runsAfterSdk(page, tag))) {
        warnings.push(lateInit(file));
      }
    }
  }
  return warnings;
}

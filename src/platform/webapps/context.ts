import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { RE2JS } from 're2js';

/**
 * The build context of a deployment: the `rootDirPath` folder of the clone as a
 * tar stream for the engine's `POST /build`, made with `tar-stream`. As the docker CLI does, it
 * leaves out what `.dockerignore` names (while always sending the Dockerfile and `.dockerignore`
 * themselves); it also leaves out the clone's `.git` folder. Every entry gets owner 0 and the commit's
 * time, so the engine's layer cache hits for files that did not change between two commits.
 */

/** One `.dockerignore` rule. */
interface IgnoreRule {
  regex: PathPattern;
  /** `!pattern`: takes back an earlier exclusion. */
  exception: boolean;
}

/** A compiled `.dockerignore` pattern: whether a whole slash-separated path matches it. */
export interface PathPattern {
  test(path: string): boolean;
}

/**
 * Turns one `.dockerignore` pattern into a regular expression over slash-separated paths relative to
 * the context root: `*` and `?` stay within one path segment, `**` spans any number of segments,
 * `[...]` is a character class (as Go's `filepath.Match`, which Docker uses). The repository's author
 * chose the pattern, so it runs in re2js, in time linear in the path (a line of many `**` backtracks
 * for minutes in JavaScript's RegExp, holding every account's requests).
 * @throws Error (re2js's) for a pattern whose character class is malformed.
 */
export function patternRegex(pattern: string): PathPattern {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else {
          out += '.*';
        }
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) out += '\\[';
      else {
        out += `[${pattern.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (c === '\\' && i + 1 < pattern.length) {
      out += `\\${pattern[++i]}`;
    } else {
      out += c.replace(/[.+^${}()|\\/]/g, '\\$&');
    }
  }
  const compiled = RE2JS.compile(`^${out}$`);
  return { test: (candidate) => compiled.matcher(candidate).find() };
}

/** The rules of a `.dockerignore` text, in order. */
export function parseDockerignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const exception = line.startsWith('!');
    if (exception) line = line.slice(1).trim();
    line = path.posix.normalize(line.replace(/^\/+/, '')).replace(/\/+$/, '');
    if (line === '' || line === '.') continue;
    rules.push({ regex: patternRegex(line), exception });
  }
  return rules;
}

/**
 * True when `relPath` is left out by `rules`: the last rule that matches the path or one of its
 * parent folders decides (Docker's semantics).
 */
export function isIgnored(relPath: string, rules: readonly IgnoreRule[]): boolean {
  let ignored = false;
  const parts = relPath.split('/');
  for (const rule of rules) {
    let matches = false;
    for (let n = parts.length; n >= 1 && !matches; n--) matches = rule.regex.test(parts.slice(0, n).join('/'));
    if (matches) ignored = !rule.exception;
  }
  return ignored;
}

/** Files the context always carries, whatever `.dockerignore` says (as the docker CLI). */
const ALWAYS = new Set(['Dockerfile', '.dockerignore']);

/**
 * The tar stream of `folder` (read lazily as the engine consumes it). Errors while reading end the
 * stream with that error.
 * @param options.mtime the time given to every entry (the commit's).
 * @param options.skipGit leave out a top-level `.git` (the clone's own).
 */
export function buildContext(folder: string, options: { mtime: Date; skipGit: boolean }): tar.Pack {
  const pack = tar.pack();
  let rules: IgnoreRule[] = [];
  try {
    rules = parseDockerignore(fs.readFileSync(path.join(folder, '.dockerignore'), 'utf8'));
  } catch {
    // no .dockerignore
  }
  const hasExceptions = rules.some((r) => r.exception);
  const header = { uid: 0, gid: 0, uname: 'root', gname: 'root', mtime: options.mtime };

  // The file is opened only once its entry exists: a pack already destroyed (the engine went away)
  // throws here, and no read stream is left behind to fail with nobody listening.
  const add = (h: Parameters<tar.Pack['entry']>[0], file?: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (pack.destroyed) return reject(new Error('the build context stream was closed'));
      const entry = pack.entry(h, (error) => (error ? reject(error) : resolve()));
      if (file) pipeline(fs.createReadStream(file), entry).catch(reject);
    });

  const walk = async (relDir: string): Promise<void> => {
    const entries = await fs.promises.readdir(path.join(folder, relDir), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      if (options.skipGit && rel === '.git') continue;
      const ignored = !ALWAYS.has(rel) && isIgnored(rel, rules);
      // An ignored folder is still walked when an exception may bring back something inside it.
      if (ignored && !(entry.isDirectory() && hasExceptions)) continue;
      const full = path.join(folder, rel);
      const stat = await fs.promises.lstat(full);
      const mode = stat.mode & 0o7777;
      if (stat.isDirectory()) {
        if (!ignored) await add({ ...header, name: `${rel}/`, type: 'directory', mode });
        await walk(rel);
      } else if (ignored) {
        continue;
      } else if (stat.isSymbolicLink()) {
        await add({ ...header, name: rel, type: 'symlink', linkname: await fs.promises.readlink(full), mode });
      } else if (stat.isFile()) {
        await add({ ...header, name: rel, type: 'file', size: stat.size, mode }, full);
      }
      // Sockets, pipes and devices have no place in an image context: left out.
    }
  };

  walk('').then(
    () => pack.finalize(),
    (error: unknown) => {
      if (!pack.destroyed) pack.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  return pack;
}

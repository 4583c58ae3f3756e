import { createHash } from 'node:crypto';
import { invalid } from '../../../errors.js';

/**
 * The npm dependencies of a Backend App's cloud code, as Back4App takes them: a `cloud/package.json`
 * beside `cloud/main.js` whose `dependencies` are installed on deploy, with `npm ci` when a lock
 * file (`cloud/package-lock.json` or `cloud/npm-shrinkwrap.json`) is deployed with it.
 *
 * Only packages from the registry are accepted: a version, range or tag, or an `npm:` alias of one.
 * `file:`, `link:`, git and tarball URL specifiers, and lock entries resolved anywhere but the
 * registry, are refused, because npm runs on the server itself: they would copy or link the host's
 * files into the app's tree, or make the server fetch from addresses cloud code may not reach.
 */

/** Where the manifest and the lock files lie in the tree. */
export const PACKAGE_JSON = 'cloud/package.json';
export const LOCK_FILES = ['cloud/npm-shrinkwrap.json', 'cloud/package-lock.json'] as const;

/** The fields of package.json that name packages (npm's package.json documentation). */
const DEPENDENCY_FIELDS = ['dependencies', 'optionalDependencies', 'devDependencies', 'peerDependencies'] as const;

/** What npm is given to install, and the key of the installed result. */
export interface DependencyManifest {
  /** The package.json written for npm: name, version and the dependency fields only (no scripts, workspaces, ...). */
  packageJson: string;
  /** The lock file deployed with it, if any: then `npm ci` installs exactly it. */
  lock: { treePath: string; text: string } | undefined;
  /** sha256 (hex) of the two above: the same hash means the same installed folder. */
  hash: string;
  /** How many packages `dependencies` and `optionalDependencies` name. */
  count: number;
}

/** npm's rule for package names (validate-npm-package-name, new packages): lower case, URL-safe, optional scope. */
const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
/** A version, a range (`^1.2.0`, `>=1 <3`, `1.x || 2`) or a dist-tag (`latest`): never a `:` or a `/`. */
const REGISTRY_SPEC = /^[A-Za-z0-9.^~<>=|*+\s-]*$/;

function checkSpec(field: string, name: string, spec: unknown): void {
  const where = `${PACKAGE_JSON} ${field}["${name}"]`;
  if (name.length > 214 || !PACKAGE_NAME.test(name)) throw invalid(`${PACKAGE_JSON} ${field} names "${name}", which is not an npm package name (lower case letters, digits, - . _ ~, an optional @scope/).`);
  if (typeof spec !== 'string') throw invalid(`${where} is ${JSON.stringify(spec)}; it must be a version, a range or a tag, as a string (e.g. "^7.0.0").`);
  const alias = /^npm:((?:@[^/@\s]+\/)?[^/@\s]+)(?:@(.*))?$/.exec(spec);
  const range = alias ? (alias[2] ?? '') : spec;
  if ((alias && !PACKAGE_NAME.test(alias[1]!)) || !REGISTRY_SPEC.test(range) || spec.length > 256) {
    throw invalid(
      `${where} is "${spec.slice(0, 120)}": cloud code installs packages from the npm registry only, named by a version, a range or a tag (e.g. "^7.0.0" or "latest", or "npm:other-name@^1.0.0"); file:, link:, git and URL dependencies are not installed.`,
    );
  }
}

/** The fields of a lock file's entry that say where a package comes from (npm's package-lock.json documentation). */
type LockEntry = { link?: unknown; resolved?: unknown; dependencies?: unknown };

/** Lock entries must come from `registry` (an origin like `https://registry.npmjs.org`), and link nothing. */
function checkLock(treePath: string, text: string, registry: string): void {
  let lock: { packages?: Record<string, LockEntry>; dependencies?: Record<string, LockEntry> } | null;
  try {
    lock = JSON.parse(text);
  } catch (error) {
    throw invalid(`${treePath} is not valid JSON (${(error as Error).message}). Deploy the lock file npm wrote, or delete it to install from ${PACKAGE_JSON} alone.`);
  }
  if (!lock || typeof lock !== 'object' || Array.isArray(lock)) throw invalid(`${treePath} must hold a JSON object, as npm writes it.`);
  const origin = new URL(registry).origin;
  const check = (key: string, entry: LockEntry | undefined) => {
    if (!entry || typeof entry !== 'object') return;
    if (entry.link === true) throw invalid(`${treePath} links "${key}" to a folder; cloud code installs packages from the npm registry only.`);
    if (entry.resolved === undefined) return;
    let from: string | undefined;
    try {
      from = new URL(String(entry.resolved)).origin;
    } catch {
      from = undefined;
    }
    if (from !== origin) {
      throw invalid(`${treePath} resolves "${key}" to ${String(entry.resolved).slice(0, 160)}, which is not on the npm registry this server uses (${origin}); cloud code installs packages from that registry only.`);
    }
  };
  for (const [key, entry] of Object.entries(lock.packages ?? {})) if (key !== '') check(key, entry);
  // Lock files of version 1 nest their entries under `dependencies`.
  const walk = (deps: unknown, prefix: string) => {
    for (const [name, entry] of Object.entries((deps && typeof deps === 'object' ? deps : {}) as Record<string, LockEntry | undefined>)) {
      check(`${prefix}${name}`, entry);
      walk(entry?.dependencies, `${prefix}${name} > `);
    }
  };
  walk(lock.dependencies, '');
}

/**
 * What to install for the tree after a deploy, or undefined when it installs nothing (no
 * `cloud/package.json`, or one without `dependencies` and `optionalDependencies`).
 *
 * @param read the text of a tree path after the deploy, undefined when there is no such file.
 * @param registry the registry npm installs from (`npm config get registry`), asked for only when a lock file is deployed.
 * @throws ManagementError(invalid) (400) naming the file and field: package.json not a JSON object,
 *   a dependency field not an object, a bad package name, a specifier that is not from the registry,
 *   a lock file that is not JSON or that resolves a package elsewhere.
 */
export async function dependencyManifest(read: (treePath: string) => string | undefined, registry: () => Promise<string>): Promise<DependencyManifest | undefined> {
  const text = read(PACKAGE_JSON);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalid(`${PACKAGE_JSON} is not valid JSON (${(error as Error).message}). Write it as a JSON object, e.g. {"dependencies": {"is-number": "^7.0.0"}}.`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid(`${PACKAGE_JSON} must hold a JSON object, e.g. {"dependencies": {"is-number": "^7.0.0"}}.`);
  const source = parsed as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const key of ['name', 'version'] as const) if (typeof source[key] === 'string') kept[key] = source[key];
  let count = 0;
  for (const field of DEPENDENCY_FIELDS) {
    const deps = source[field];
    if (deps === undefined) continue;
    if (!deps || typeof deps !== 'object' || Array.isArray(deps)) throw invalid(`${PACKAGE_JSON} ${field} must be an object of package names and versions, e.g. {"is-number": "^7.0.0"}.`);
    for (const [name, spec] of Object.entries(deps)) checkSpec(field, name, spec);
    if (field === 'dependencies' || field === 'optionalDependencies') count += Object.keys(deps).length;
    kept[field] = deps;
  }
  if (count === 0) return undefined;
  let lock: DependencyManifest['lock'];
  for (const treePath of LOCK_FILES) {
    const lockText = read(treePath);
    if (lockText === undefined) continue;
    checkLock(treePath, lockText, await registry());
    lock = { treePath, text: lockText };
    break;
  }
  const packageJson = `${JSON.stringify(kept, null, 2)}\n`;
  const hash = createHash('sha256').update(packageJson).update('\0').update(lock?.treePath ?? '').update('\0').update(lock?.text ?? '').digest('hex');
  return { packageJson, lock, hash, count };
}

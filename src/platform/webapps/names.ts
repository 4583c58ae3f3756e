import { invalid } from '../../errors.js';
import { isBranchName } from '../repohost/names.js';

/**
 * The rules on what callers send for Web Apps, each a small function that throws
 * `ManagementError(invalid)` with a text that says what to send instead.
 */

/** A DNS label (RFC 1123): 1 to 63 lowercase letters, digits and inner dashes. */
export const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The default health check path. */
export const DEFAULT_HEALTH_CHECK_PATH = '/';
/** The container port when neither `port` nor the image's `EXPOSE` names one. */
export const DEFAULT_PORT = 8080;

/** @throws ManagementError(invalid) unless `name` is a DNS label. */
export function checkAppName(name: string): void {
  if (!DNS_LABEL.test(name)) {
    throw invalid(
      `appName "${name}" is not a DNS label: use 1 to 63 lowercase letters, digits and dashes, starting and ending with a letter or digit (for example "hello-web"). It becomes part of the app's address.`,
    );
  }
}

/**
 * The subdomains to try for a Web App named `name`, in order: the name itself, then `<name>-2`,
 * `<name>-3`, ... (the name shortened so that each stays a DNS label). Subdomains are global to the
 * Backyard while names are unique per account only.
 */
export function* subdomainCandidates(name: string): Generator<string> {
  yield name;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    yield `${name.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
  }
}

/** Bounds of `replicas`: how many tasks a Web App's swarm service runs (swarm.ts). */
export const MIN_REPLICAS = 1;
export const MAX_REPLICAS = 10;
export const DEFAULT_REPLICAS = 1;

/** @throws ManagementError(invalid) unless `replicas` is an integer from MIN_REPLICAS to MAX_REPLICAS. */
export function checkReplicas(replicas: number): void {
  if (!Number.isInteger(replicas) || replicas < MIN_REPLICAS || replicas > MAX_REPLICAS) {
    throw invalid(`replicas must be an integer from ${MIN_REPLICAS} to ${MAX_REPLICAS} (it is ${replicas}): how many copies of the app run when the Docker engine is a swarm manager.`);
  }
}

/** @throws ManagementError(invalid) unless `branch` is a branch name git accepts. */
export function checkBranchName(branch: string): void {
  if (!isBranchName(branch)) {
    throw invalid(`branchName "${branch}" is not a valid git branch name. Give the branch's name as git shows it, such as "main".`);
  }
}

/**
 * The folder of the repository that holds the Dockerfile, in one spelling: `.` for the root, else
 * `a/b` (no leading `./` or `/`, no trailing `/`). `''`, `.`, `/`, `./app/` are all accepted.
 * @throws ManagementError(invalid) for `..` segments, backslashes or control characters.
 */
export function normaliseRootDir(rootDirPath: string): string {
  if (/[\x00-\x1f\x7f\\]/.test(rootDirPath)) {
    throw invalid(`rootDirPath "${rootDirPath}" holds a backslash or a control character: give a folder path with forward slashes, such as "app" or ".".`);
  }
  const parts = rootDirPath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) {
    throw invalid(`rootDirPath "${rootDirPath}" leaves the repository (".."): give a folder inside it, relative to its root, such as "app" or ".".`);
  }
  return parts.length === 0 ? '.' : parts.join('/');
}

/** The Dockerfile's path in the repository for a normalised root folder. */
export const dockerfilePath = (rootDir: string): string => (rootDir === '.' ? 'Dockerfile' : `${rootDir}/Dockerfile`);

/**
 * @throws ManagementError(invalid) unless `path` is an HTTP path: it starts with `/` and holds no
 * spaces or control characters.
 */
export function checkHealthCheckPath(path: string): void {
  if (!path.startsWith('/') || path.startsWith('//') || /[\s\x00-\x1f\x7f#]/.test(path)) {
    throw invalid(`healthCheckPath "${path}" is not a path: it must start with a single "/" and hold no spaces, such as "/" or "/health".`);
  }
}

/** An environment variable as the spec's `EnvironmentVariable`. */
export interface EnvironmentVariable {
  key: string;
  value: string;
}

/** At most this many variables per Web App, and this many bytes per value. */
export const ENV_LIMITS = { count: 200, valueBytes: 32 * 1024 } as const;

/**
 * Checks a list of variables sent by a caller: no key twice, no NUL in values, within `ENV_LIMITS`.
 * @throws ManagementError(invalid) naming the key at fault (never its value).
 */
export function checkVariables(variables: readonly EnvironmentVariable[], field: string): void {
  const seen = new Set<string>();
  for (const { key, value } of variables) {
    if (seen.has(key)) throw invalid(`${field} names the key "${key}" twice: give each variable once.`);
    seen.add(key);
    if (value.includes('\0')) throw invalid(`The value of the environment variable "${key}" holds a NUL character, which a process environment cannot carry.`);
    if (Buffer.byteLength(value) > ENV_LIMITS.valueBytes) {
      throw invalid(`The value of the environment variable "${key}" is longer than ${ENV_LIMITS.valueBytes} bytes: keep large data in files of the repository instead.`);
    }
  }
}

/**
 * The variables after an update (updateWebApp): `remove` keys dropped, then `set` added or replaced
 * (in the order first set). Keys are case-sensitive, as in a process environment.
 * @throws ManagementError(invalid) when a key is both set and removed, or the result has too many.
 */
export function mergeVariables(current: readonly EnvironmentVariable[], set: readonly EnvironmentVariable[], remove: readonly string[]): EnvironmentVariable[] {
  checkVariables(set, 'setEnvironmentVariables');
  const removing = new Set(remove);
  const both = set.find((v) => removing.has(v.key));
  if (both) throw invalid(`The key "${both.key}" is in both setEnvironmentVariables and removeEnvironmentVariablesKeys: send it in one of them.`);
  const merged = new Map(current.filter((v) => !removing.has(v.key)).map((v) => [v.key, v.value]));
  for (const { key, value } of set) merged.set(key, value);
  if (merged.size > ENV_LIMITS.count) throw invalid(`A Web App may have at most ${ENV_LIMITS.count} environment variables.`);
  return [...merged].map(([key, value]) => ({ key, value }));
}

/** True when two variable lists hold the same keys with the same values (order ignored). */
export function sameVariables(a: readonly EnvironmentVariable[], b: readonly EnvironmentVariable[]): boolean {
  if (a.length !== b.length) return false;
  const map = new Map(a.map((v) => [v.key, v.value]));
  return b.every((v) => map.get(v.key) === v.value);
}

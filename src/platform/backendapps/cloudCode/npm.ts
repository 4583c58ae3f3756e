import { spawn } from 'node:child_process';

/**
 * npm, run as a child process for a cloud code deploy: with a minimal environment (the server's
 * npm configuration and network settings, never Backyard's own variables), no lifecycle scripts, a
 * time limit and a bound on the output it keeps.
 */

/** How npm ran, when it failed: its own reason and error code (`E404`), or why it was stopped. */
export class NpmFailure extends Error {
  override name = 'NpmFailure';
  constructor(
    message: string,
    /** npm's `code` (`E404`, `ETARGET`, `ENOTFOUND`, ...), `timeout`, or `spawn` when npm could not start. */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface NpmOptions {
  /** The folder holding the package.json (and lock file) to install; `node_modules` appears in it. */
  folder: string;
  /** Milliseconds before npm is killed. */
  timeoutMs: number;
  /** Bytes of npm's output kept (the last ones) for the reason of a failure. */
  maxOutputBytes: number;
  /** The environment npm's is made from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** npm settings of the server's environment that are not passed on: where npm installs is ours to say. */
const LOCATION_SETTINGS = new Set(['prefix', 'local_prefix', 'global', 'global_prefix', 'location', 'workspace', 'workspaces', 'include_workspace_root', 'ignore_scripts', 'script_shell']);

/**
 * The environment npm runs with: `PATH` and `HOME` (npm's user configuration, `~/.npmrc`, and cache
 * live there), the proxy and certificate variables, and every `npm_config_*` setting (the registry
 * above all) except those that say where or how it installs. Nothing else of the server's
 * environment: Backyard's variables hold secrets.
 */
export function npmEnvironment(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(from)) {
    if (value === undefined) continue;
    const lower = key.toLowerCase();
    if (['path', 'home', 'http_proxy', 'https_proxy', 'no_proxy', 'node_extra_ca_certs', 'ssl_cert_file', 'ssl_cert_dir', 'tmpdir'].includes(lower)) env[key] = value;
    else if (lower.startsWith('npm_config_') && !LOCATION_SETTINGS.has(lower.slice('npm_config_'.length).replace(/-/g, '_'))) env[key] = value;
  }
  env.NO_UPDATE_NOTIFIER = '1';
  return env;
}

/** npm's error lines (`npm error ...`, `npm ERR! ...`) without the pointer to its log file, which names server paths. */
function npmReason(output: string): { reason: string; code: string | undefined } {
  const lines = output
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => /^npm (error|ERR!)/.test(l))
    .map((l) => l.replace(/^npm (error|ERR!)\s?/, ''))
    .filter((l) => l.trim() !== '' && !/complete log of this run|^A complete log|\/_logs\//i.test(l));
  const code = /^code (\S+)/.exec(lines.find((l) => l.startsWith('code ')) ?? '')?.[1];
  const text = lines.filter((l) => !l.startsWith('code ')).slice(0, 12).join('\n').trim();
  return { reason: text || output.trim().split('\n').slice(-6).join('\n'), code };
}

/**
 * Runs `npm <args>` in `options.folder`, resolving once it exits with 0.
 * @throws NpmFailure with npm's error lines (at most 12) and code when it exits otherwise, with code
 *   `timeout` when it outlives `timeoutMs` (then it and its children are killed), with code `spawn`
 *   when npm is not found.
 */
export function runNpm(args: readonly string[], options: NpmOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', [...args], { cwd: options.folder, env: npmEnvironment(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length > options.maxOutputBytes) output = output.slice(-options.maxOutputBytes);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // npm may have started children (git, a shell): its process group goes with it.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, options.timeoutMs);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new NpmFailure(`npm could not be started (${error.code ?? error.message}); install npm on the server`, 'spawn'));
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      if (timedOut) return reject(new NpmFailure(`npm did not finish within ${options.timeoutMs / 1000} s and was stopped`, 'timeout'));
      if (status === 0) return resolve();
      const { reason, code } = npmReason(output);
      reject(new NpmFailure(reason || `npm exited with status ${status}`, code));
    });
  });
}

/** The registry npm installs from with this environment (`npm config get registry`), e.g. `https://registry.npmjs.org/`. */
export function npmRegistry(folder: string, env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['config', 'get', 'registry'], { cwd: folder, env: npmEnvironment(env), stdio: ['ignore', 'pipe', 'ignore'], timeout: 30_000 });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('error', (error: NodeJS.ErrnoException) => reject(new NpmFailure(`npm could not be started (${error.code ?? error.message})`, 'spawn')));
    child.once('close', (status) => {
      const registry = out.trim();
      if (status === 0 && /^https?:\/\//.test(registry)) resolve(registry);
      else reject(new NpmFailure(`npm config get registry answered "${registry.slice(0, 200)}"`, undefined));
    });
  });
}

import { execFile } from 'node:child_process';
import os from 'node:os';

/**
 * The environment of every `git` Backyard runs on its repositories: only `PATH` is inherited (never
 * Backyard's own variables, which may hold the GitHub App's key), the user's and the system's git
 * configuration are ignored, and messages are in English so that they can be matched.
 */
export function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: os.tmpdir(),
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}

/**
 * Settings given to every server-side git command: no hooks run (pushes are seen in-process, not by
 * hook scripts), and pushes over HTTP are allowed (access is checked before git runs).
 */
export const SERVER_GIT_OPTIONS = ['-c', 'core.hooksPath=/dev/null', '-c', 'http.receivepack=true'] as const;

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs `git <args>` in `cwd` and collects its output (at most `maxBuffer` bytes of stdout).
 * Never throws for a non-zero exit: the caller reads `code`.
 * @throws Error when git cannot be started at all (not installed).
 */
export function runGit(args: readonly string[], options: { cwd?: string; maxBuffer?: number; timeoutMs?: number } = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...SERVER_GIT_OPTIONS, ...args],
      {
        cwd: options.cwd,
        env: gitEnvironment(),
        encoding: 'buffer',
        maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
        timeout: options.timeoutMs ?? 60_000,
      },
      (error, stdout, stderr) => {
        const err = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
        if (err && typeof err.code === 'string') {
          reject(new Error(`git could not be run: ${err.code === 'ENOENT' ? 'it is not installed' : err.message}`));
          return;
        }
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr: stderr.toString('utf8') });
      },
    );
  });
}

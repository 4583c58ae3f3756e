import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { invalid } from '../../errors.js';
import type { Account } from '../accounts/service.js';
import { gitEnvironment } from '../repohost/gitProcess.js';
import type { RepoHostService, RepositorySource } from '../repohost/service.js';
import { dockerfilePath } from './names.js';

/** A repository a Web App deploys from: where it is and which branch. */
export interface RepositoryRef {
  owner: string;
  repo: string;
  branch: string;
}

/** The branch head that a check or a checkout found. */
export interface Head {
  branch: string;
  sha: string;
}

/** A failure of a git step, with a text fit for a deployment's `error` (no credential in it). */
export class SourceError extends Error {
  override name = 'SourceError';
}

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * Reads the repositories of Web Apps on either host: the checks of
 * createWebApp and updateWebApp (repository, branch, Dockerfile), the branch head for the poller, and
 * the shallow clone of a deployment. The built-in host is read in place (its bare repository);
 * GitHub through `git` with a fresh installation token in the address, which never reaches a log,
 * an error text or the disk beyond the clone's own folder (removed after the build).
 */
export class RepositorySources {
  constructor(private readonly repoHost: RepoHostService) {}

  /**
   * Checks that the repository exists for `account`, that the branch exists (default: the
   * repository's default branch) and that `<rootDir>/Dockerfile` is a file there.
   * @returns the branch and its head commit.
   * @throws ManagementError(invalid) saying which of the three is missing and what to do.
   */
  async check(account: Account, owner: string, repo: string, branch: string | undefined, rootDir: string): Promise<Head> {
    const source = await this.repoHost.source(account, owner, repo);
    const head = source.host === 'builtin' ? await this.checkBuiltin(owner, repo, branch) : await this.checkRemote(source, owner, repo, branch);
    const dockerfile = dockerfilePath(rootDir);
    const found =
      source.host === 'builtin' ? await this.repoHost.hasFile(owner, repo, head.sha, dockerfile) : await this.remoteHasFile(source, head.branch, dockerfile);
    if (!found) {
      throw invalid(
        `There is no Dockerfile at ${dockerfile} on the branch "${head.branch}" of ${owner}/${repo}. Push a Dockerfile there, or set rootDirPath to the folder that holds it.`,
      );
    }
    return head;
  }

  /**
   * The head commit of `branch`, or undefined when the repository or the branch is gone.
   * @throws SourceError when the host cannot be read (GitHub unreachable, token refused).
   */
  async headOf(account: Account, ref: RepositoryRef): Promise<string | undefined> {
    let source: RepositorySource;
    try {
      source = await this.repoHost.source(account, ref.owner, ref.repo);
    } catch {
      return undefined;
    }
    if (source.host === 'builtin') return this.repoHost.resolveBranch(ref.owner, ref.repo, ref.branch);
    return (await this.lsRemote(source, [`refs/heads/${ref.branch}`])).get(`refs/heads/${ref.branch}`);
  }

  /**
   * Clones the head of the branch into `dir` (which must not exist): `git clone --depth 1 --branch`.
   * @returns the commit cloned and its committer time (seconds since the epoch).
   * @throws SourceError saying what failed (repository or branch gone, host unreachable, time-out).
   */
  async checkout(account: Account, ref: RepositoryRef, dir: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<{ sha: string; time: number }> {
    let source: RepositorySource;
    try {
      source = await this.repoHost.source(account, ref.owner, ref.repo);
    } catch (error) {
      throw new SourceError(error instanceof Error ? error.message : String(error));
    }
    // file:// so that --depth applies to the built-in host's local repositories too.
    const url = source.host === 'builtin' ? pathToFileURL(source.url).href : source.url;
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const clone = await git(['clone', '--quiet', '--depth', '1', '--single-branch', '--no-tags', '--branch', ref.branch, '--', url, dir], options);
    if (clone.code !== 0) {
      const why = redact(clone.stderr, source);
      if (/Remote branch .* not found|couldn't find remote ref/i.test(why)) {
        throw new SourceError(`the branch "${ref.branch}" does not exist in ${ref.owner}/${ref.repo} any more. Push it, or change branchName with updateWebApp.`);
      }
      throw new SourceError(`git clone of ${source.displayUrl} failed: ${lastLine(why)}`);
    }
    const log = await git(['-C', dir, 'log', '-1', '--format=%H %ct'], options);
    const [sha, time] = log.stdout.trim().split(' ');
    if (log.code !== 0 || !sha || !SHA.test(sha)) throw new SourceError(`the cloned branch "${ref.branch}" has no readable head commit.`);
    return { sha, time: Number(time) };
  }

  private async checkBuiltin(owner: string, repo: string, branch: string | undefined): Promise<Head> {
    const name = branch ?? (await this.repoHost.defaultBranch(owner, repo));
    const sha = name === undefined ? undefined : await this.repoHost.resolveBranch(owner, repo, name);
    if (name === undefined || sha === undefined) {
      throw invalid(
        branch === undefined
          ? `The repository ${owner}/${repo} has no commits on its default branch yet. Push a branch first, or give branchName.`
          : `The branch "${branch}" does not exist in ${owner}/${repo}. Push it first, or give an existing branch (default: the repository's default branch).`,
      );
    }
    return { branch: name, sha };
  }

  private async checkRemote(source: RepositorySource, owner: string, repo: string, branch: string | undefined): Promise<Head> {
    if (branch === undefined) {
      const result = await git(['ls-remote', '--symref', '--', source.url, 'HEAD'], { timeoutMs: 60_000 });
      if (result.code !== 0) throw invalid(`The repository ${owner}/${repo} could not be read: ${lastLine(redact(result.stderr, source))}`);
      const match = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(result.stdout);
      if (!match) throw invalid(`The repository ${owner}/${repo} has no default branch yet. Push a branch first, or give branchName.`);
      branch = match[1]!;
    }
    const sha = (await this.lsRemote(source, [`refs/heads/${branch}`]).catch((error: unknown) => {
      throw invalid(`The repository ${owner}/${repo} could not be read: ${(error as Error).message}`);
    })).get(`refs/heads/${branch}`);
    if (!sha) throw invalid(`The branch "${branch}" does not exist in ${owner}/${repo}. Push it first, or give an existing branch.`);
    return { branch, sha };
  }

  /** Fetches only the tree of the branch head (no file contents where the host allows it) and looks for `file`. */
  private async remoteHasFile(source: RepositorySource, branch: string, file: string): Promise<boolean> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-probe-'));
    try {
      if ((await git(['init', '--quiet', '--bare', dir], { timeoutMs: 30_000 })).code !== 0) return false;
      const fetched = await git(['-C', dir, 'fetch', '--quiet', '--depth', '1', '--filter=blob:none', '--', source.url, `refs/heads/${branch}`], { timeoutMs: 120_000 });
      if (fetched.code !== 0) throw invalid(`The branch "${branch}" could not be fetched: ${lastLine(redact(fetched.stderr, source))}`);
      const type = await git(['-C', dir, 'cat-file', '-t', `FETCH_HEAD:${file}`], { timeoutMs: 30_000 });
      return type.code === 0 && type.stdout.trim() === 'blob';
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  private async lsRemote(source: RepositorySource, refs: string[]): Promise<Map<string, string>> {
    const result = await git(['ls-remote', '--', source.url, ...refs], { timeoutMs: 60_000 });
    if (result.code !== 0) throw new SourceError(lastLine(redact(result.stderr, source)));
    const heads = new Map<string, string>();
    for (const line of result.stdout.split('\n')) {
      const [sha, ref] = line.split('\t');
      if (sha && ref && SHA.test(sha)) heads.set(ref, sha);
    }
    return heads;
  }
}

/** Replaces the credential-bearing address by the display one in git's messages. */
function redact(text: string, source: RepositorySource): string {
  let out = text.split(source.url).join(source.displayUrl);
  try {
    const password = new URL(source.url).password;
    if (password) out = out.split(password).join('***');
  } catch {
    // a path, not a URL: nothing secret in it
  }
  return out;
}

const lastLine = (text: string): string => text.trim().split('\n').filter(Boolean).at(-1)?.replace(/^fatal: /, '') ?? 'no message';

/** Runs `git` (never through a shell) with Backyard's isolated git environment; never throws for an exit code. */
function git(args: string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-c', 'core.hooksPath=/dev/null', '-c', 'advice.detachedHead=false', ...args],
      { env: gitEnvironment(), timeout: options.timeoutMs, signal: options.signal, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const err = error as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
        if (err?.name === 'AbortError') return reject(new SourceError('it was cancelled because Backyard is stopping.'));
        if (err && typeof err.code === 'string') return reject(new SourceError(`git could not be run (${err.code}).`));
        if (err?.killed) return resolve({ code: 124, stdout, stderr: `${stderr}\ngit did not finish within ${Math.round(options.timeoutMs / 1000)} s` });
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

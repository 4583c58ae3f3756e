import fs from 'node:fs';
import path from 'node:path';
import { invalid } from '../../errors.js';
import type { Logger } from '../../log.js';
import { runGit } from './gitProcess.js';
import { isBranchName, isOwnerLogin, repoNameProblem, ZERO_SHA } from './names.js';

/** One ref that a push changed: `before` is ZERO_SHA for a new ref, `after` is ZERO_SHA for a deleted one. */
export interface RefUpdate {
  /** Full ref name, e.g. `refs/heads/main`. */
  ref: string;
  before: string;
  after: string;
}

/** Fired after a push to the built-in git host changed at least one ref. */
export interface PushEvent {
  /** The owner's login as the account spells it (the folder's name). */
  owner: string;
  repo: string;
  /** The changed refs, sorted by name. */
  refs: RefUpdate[];
  /** Login of the account whose token pushed. */
  pusher: string;
}

export type PushListener = (event: PushEvent) => void | Promise<void>;

/** A repository of the built-in host, as listed. */
export interface BuiltinRepository {
  owner: string;
  repo: string;
  /** Absolute path of the bare repository. */
  path: string;
}

const COMMIT_SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The built-in git host's repositories (docs/design.md, "State": `BACKYARD_HOME/git/<owner>/<repo>.git`)
 * and what Backyard itself reads from them. Serving them over HTTP is `src/server/git.ts`; who may
 * reach them is decided by `RepoHostService`.
 *
 * Owners are Backyard account logins, matched without regard to case and stored as the account
 * spells them: `accountLogin` maps a login to that spelling (undefined: no such account) when a
 * repository is made, and the owner folders on disk keep it for every later lookup.
 */
export class BuiltinGitHost {
  private readonly listeners = new Set<PushListener>();
  /** Per repository, the tail of a chain of writes (creation, pushes): one at a time. */
  private readonly writeChains = new Map<string, Promise<unknown>>();

  constructor(
    /** `BACKYARD_HOME/git`, the `GIT_PROJECT_ROOT` of `git http-backend`. */
    readonly root: string,
    private readonly accountLogin: (login: string) => Promise<string | undefined>,
    private readonly log: Logger,
  ) {}

  /**
   * Absolute path of the bare repository `<owner>/<repo>` (which may not exist yet). Clone or fetch
   * from it directly inside Backyard: `git clone --branch <b> <localPath>` needs no token.
   * @throws ManagementError(invalid) for a malformed owner or repository name.
   */
  localPath(owner: string, repo: string): string {
    const { owner: canonical, repo: name } = this.checkNames(owner, repo);
    return path.join(this.root, canonical, `${name}.git`);
  }

  /** The path below `GIT_PROJECT_ROOT`, as `git http-backend` takes it in `PATH_INFO`: `/<owner>/<repo>.git`. */
  projectPath(owner: string, repo: string): string {
    const { owner: canonical, repo: name } = this.checkNames(owner, repo);
    return `/${canonical}/${name}.git`;
  }

  /** True when `<owner>/<repo>` exists (false, never a throw, for malformed names). */
  exists(owner: string, repo: string): boolean {
    if (!isOwnerLogin(owner) || repoNameProblem(repo) !== undefined) return false;
    try {
      return fs.statSync(path.join(this.localPath(owner, repo), 'HEAD')).isFile();
    } catch {
      return false;
    }
  }

  /**
   * Creates the bare repository `<owner>/<repo>` with `main` as its default branch, unless it exists.
   * @returns whether it was created now.
   * @throws ManagementError(invalid) for a malformed name or an owner that is no Backyard account.
   */
  async create(owner: string, repo: string): Promise<{ created: boolean; repository: BuiltinRepository }> {
    this.checkNames(owner, repo);
    const canonical = await this.accountLogin(owner);
    if (canonical === undefined) throw invalid(`No Backyard account has the login "${owner}"; repositories of the built-in git host belong to an account.`);
    const dir = this.localPath(canonical, repo);
    return this.withWriteLock(dir, async () => {
      const repository = { owner: canonical, repo, path: dir };
      if (this.exists(canonical, repo)) return { created: false, repository };
      fs.mkdirSync(path.dirname(dir), { recursive: true });
      // No template: no sample hooks, nothing but the repository itself.
      const result = await runGit(['init', '--quiet', '--bare', '--template=', '--initial-branch=main', dir]);
      if (result.code !== 0) throw new Error(`git init failed for ${canonical}/${repo}: ${result.stderr.trim()}`);
      this.log.info({ owner: canonical, repo }, 'repository created');
      return { created: true, repository };
    });
  }

  /** The repositories of `owner` (every owner when omitted), sorted. */
  list(owner?: string): BuiltinRepository[] {
    const owners = owner === undefined ? safeReaddir(this.root) : [this.canonicalOwner(owner)];
    const found: BuiltinRepository[] = [];
    for (const o of owners.sort()) {
      if (!isOwnerLogin(o)) continue;
      for (const entry of safeReaddir(path.join(this.root, o)).sort()) {
        const repo = entry.replace(/\.git$/, '');
        if (entry.endsWith('.git') && repoNameProblem(repo) === undefined && this.exists(o, repo)) {
          found.push({ owner: o, repo, path: path.join(this.root, o, entry) });
        }
      }
    }
    return found;
  }

  /**
   * The repository's default branch: the branch its `HEAD` names (`main` for a new repository;
   * after the first push that did not create it, the first branch pushed).
   * @returns undefined when the repository does not exist.
   */
  async defaultBranch(owner: string, repo: string): Promise<string | undefined> {
    if (!this.exists(owner, repo)) return undefined;
    const result = await runGit(['symbolic-ref', '--quiet', 'HEAD'], { cwd: this.localPath(owner, repo) });
    const ref = result.stdout.toString('utf8').trim();
    return result.code === 0 && ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : undefined;
  }

  /**
   * The commit SHA at the head of `branch`.
   * @returns undefined when the repository or the branch does not exist (or the name is malformed).
   */
  async resolveBranch(owner: string, repo: string, branch: string): Promise<string | undefined> {
    if (!isBranchName(branch) || !this.exists(owner, repo)) return undefined;
    const result = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`], {
      cwd: this.localPath(owner, repo),
    });
    const sha = result.stdout.toString('utf8').trim();
    return result.code === 0 && COMMIT_SHA.test(sha) ? sha : undefined;
  }

  /**
   * True when `filePath` (relative to the repository root; `./` and leading `/` allowed) is a file
   * at `ref`, a branch name or a commit SHA. False for a missing repository, ref or file, a folder,
   * or a path that tries to leave the tree (`..`).
   */
  async hasFile(owner: string, repo: string, ref: string, filePath: string): Promise<boolean> {
    const spec = this.blobSpec(owner, repo, ref, filePath);
    if (!spec) return false;
    const result = await runGit(['cat-file', '-t', spec], { cwd: this.localPath(owner, repo) });
    return result.code === 0 && result.stdout.toString('utf8').trim() === 'blob';
  }

  /**
   * The content of `filePath` at `ref` (as `hasFile` takes them), or undefined when it is no file
   * there or is larger than `maxBytes` (default 1 MiB).
   */
  async readFile(owner: string, repo: string, ref: string, filePath: string, maxBytes = 1024 * 1024): Promise<Buffer | undefined> {
    if (!(await this.hasFile(owner, repo, ref, filePath))) return undefined;
    const spec = this.blobSpec(owner, repo, ref, filePath)!;
    const cwd = this.localPath(owner, repo);
    const size = Number((await runGit(['cat-file', '-s', spec], { cwd })).stdout.toString('utf8').trim());
    if (!Number.isFinite(size) || size > maxBytes) return undefined;
    const result = await runGit(['cat-file', 'blob', spec], { cwd, maxBuffer: maxBytes + 1 });
    return result.code === 0 ? result.stdout : undefined;
  }

  /**
   * Every ref of the repository and the object it points at (`refs/heads/main` → SHA); empty for a
   * missing or empty repository.
   */
  async refs(owner: string, repo: string): Promise<Map<string, string>> {
    const refs = new Map<string, string>();
    if (!this.exists(owner, repo)) return refs;
    const result = await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: this.localPath(owner, repo) });
    if (result.code !== 0) throw new Error(`git for-each-ref failed: ${result.stderr.trim()}`);
    for (const line of result.stdout.toString('utf8').split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
    }
    return refs;
  }

  /**
   * Subscribes to pushes: `listener` runs after every push to the built-in host that changed refs
   * (in-process; no hook scripts). A failing listener is logged and does not affect the push or
   * other listeners.
   * @returns a function that unsubscribes.
   */
  onPush(listener: PushListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs one push (`run`, the `git-receive-pack` request) alone on its repository, compares the refs
   * before and after, repairs a `HEAD` that names no branch, and fires the push event.
   * @returns what `run` returned.
   */
  async receivePush<T>(owner: string, repo: string, pusher: string, run: () => Promise<T>): Promise<T> {
    const dir = this.localPath(owner, repo);
    return this.withWriteLock(dir, async () => {
      const before = await this.refs(owner, repo);
      let result: T;
      try {
        result = await run();
      } finally {
        // Even a failed push may have moved some refs (pushes are not atomic by default).
        await this.afterPush(owner, repo, pusher, before).catch((err: unknown) => this.log.error({ err, owner, repo }, 'reading refs after a push failed'));
      }
      return result;
    });
  }

  private async afterPush(owner: string, repo: string, pusher: string, before: Map<string, string>): Promise<void> {
    const after = await this.refs(owner, repo);
    const changed: RefUpdate[] = [];
    for (const ref of new Set([...before.keys(), ...after.keys()])) {
      const was = before.get(ref) ?? ZERO_SHA;
      const now = after.get(ref) ?? ZERO_SHA;
      if (was !== now) changed.push({ ref, before: was, after: now });
    }
    if (changed.length === 0) return;
    changed.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
    await this.repairHead(owner, repo, after, changed);
    const event: PushEvent = { owner: this.canonicalOwner(owner), repo, refs: changed, pusher };
    this.log.info({ owner: event.owner, repo, refs: changed.map((r) => r.ref), pusher }, 'push received');
    for (const listener of this.listeners) {
      try {
        const pending = listener(event);
        if (pending && typeof pending.then === 'function') {
          pending.then(undefined, (err: unknown) => this.log.error({ err, owner, repo }, 'push listener failed'));
        }
      } catch (err) {
        this.log.error({ err, owner, repo }, 'push listener failed');
      }
    }
  }

  /**
   * When `HEAD` names a branch that does not exist (a first push of `master` to a new repository
   * whose HEAD is `main`), points it at a pushed branch, as GitHub makes the first branch the
   * default: `main`, else `master`, else the first branch pushed.
   */
  private async repairHead(owner: string, repo: string, refs: Map<string, string>, changed: RefUpdate[]): Promise<void> {
    const cwd = this.localPath(owner, repo);
    const head = (await runGit(['symbolic-ref', '--quiet', 'HEAD'], { cwd })).stdout.toString('utf8').trim();
    if (head && refs.has(head)) return;
    const pushed = changed.filter((r) => r.after !== ZERO_SHA && r.ref.startsWith('refs/heads/')).map((r) => r.ref);
    const heads = [...refs.keys()].filter((r) => r.startsWith('refs/heads/'));
    const choice = ['refs/heads/main', 'refs/heads/master'].find((r) => refs.has(r)) ?? pushed[0] ?? heads[0];
    if (choice) await runGit(['symbolic-ref', 'HEAD', choice], { cwd });
  }

  /** Runs `task` after every earlier write to the same repository has finished. */
  private withWriteLock<T>(dir: string, task: () => Promise<T>): Promise<T> {
    const previous = this.writeChains.get(dir) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.writeChains.set(dir, tail);
    void tail.then(() => {
      if (this.writeChains.get(dir) === tail) this.writeChains.delete(dir);
    });
    return next;
  }

  private blobSpec(owner: string, repo: string, ref: string, filePath: string): string | undefined {
    if (!this.exists(owner, repo)) return undefined;
    const rev = COMMIT_SHA.test(ref) ? ref : isBranchName(ref) ? `refs/heads/${ref}` : undefined;
    if (!rev) return undefined;
    const parts = filePath.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
    if (parts.length === 0 || parts.some((p) => p === '..') || /[\x00-\x1f]/.test(filePath)) return undefined;
    return `${rev}:${parts.join('/')}`;
  }

  private checkNames(owner: string, repo: string): { owner: string; repo: string } {
    if (!isOwnerLogin(owner)) throw invalid(`"${owner}" is not a valid owner login: use 1 to 39 letters, digits or single dashes.`);
    const problem = repoNameProblem(repo);
    if (problem) throw invalid(`"${repo}" is not a valid repository name: ${problem}.`);
    return { owner: this.canonicalOwner(owner), repo };
  }

  /** The spelling of `owner` among the owner folders (as its account spells it), or `owner` when it has none yet. */
  private canonicalOwner(owner: string): string {
    if (fs.existsSync(path.join(this.root, owner))) return owner;
    const lower = owner.toLowerCase();
    return safeReaddir(this.root).find((folder) => folder.toLowerCase() === lower) ?? owner;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

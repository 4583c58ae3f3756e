import type { GitHubAppConfig } from '../../config.js';
import { invalid } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Account, AccountService } from '../accounts/service.js';
import type { Sql } from '../../shared/sql.js';
import type { PublicUrls } from '../urls.js';
import { AccessTokens, ACCESS_TOKEN_TTL_MS } from './accessTokens.js';
import { BuiltinGitHost, type PushListener } from './builtin.js';
import { GitHubAppHost, GitHubLinks } from './github.js';
import type { RepoHostOperations } from '../services.js';

export type { PushEvent, PushListener, RefUpdate } from './builtin.js';

/** The two repository hosts (docs/design.md, decision 10). */
export type RepoHostKind = 'builtin' | 'github';

/** Where a git process inside Backyard clones a repository from (for Web App builds). */
export interface RepositorySource {
  host: RepoHostKind;
  /**
   * What to give `git clone` / `git fetch` / `git ls-remote`: the bare repository's path for the
   * built-in host (no credential needed), or `https://x-access-token:<fresh token>@github.com/<owner>/<repo>.git`
   * for GitHub. A secret for GitHub: never log or store it.
   */
  url: string;
  /** The same address without any credential, fit for logs and people. */
  displayUrl: string;
}

export interface RepoHostOptions {
  db: Sql;
  /** `BACKYARD_HOME/git`. */
  root: string;
  accounts: AccountService;
  urls: PublicUrls;
  log: Logger;
  /** The GitHub App, when configured. */
  github?: GitHubAppConfig;
  /** Lifetime of built-in access tokens (default one hour). */
  tokenTtlMs?: number;
}

/**
 * The repository host: the built-in git host, its access tokens, and
 * the GitHub App when configured.
 *
 * Which host answers for a repository-host login (operation 7, and a Web App's
 * `repositoryOwnerLogin`): GitHub when the app is configured and the login is linked to the caller's
 * account (`backyard account link <login> --github <githubLogin>`); otherwise the built-in host,
 * where the only login linked to an account is its own.
 */
export class RepoHostService implements RepoHostOperations {
  readonly builtin: BuiltinGitHost;
  readonly accessTokens: AccessTokens;
  readonly githubLinks: GitHubLinks;
  /** Undefined when no GitHub App is configured. */
  readonly github: GitHubAppHost | undefined;
  private readonly accounts: AccountService;
  private readonly urls: PublicUrls;

  constructor(options: RepoHostOptions) {
    this.accounts = options.accounts;
    this.urls = options.urls;
    this.builtin = new BuiltinGitHost(options.root, async (login) => (await options.accounts.findByLogin(login))?.login, options.log);
    this.accessTokens = new AccessTokens(options.db, options.tokenTtlMs ?? ACCESS_TOKEN_TTL_MS);
    this.githubLinks = new GitHubLinks(options.db);
    this.github = options.github ? new GitHubAppHost(options.github, options.log) : undefined;
  }

  // ---- Operation 7 ----

  /**
   * Creates a repository access token for `accountLogin` (default: the caller's own login), from
   * the host `hostFor` chooses: a one-hour token of the built-in host, or a GitHub App installation
   * token.
   * @throws ManagementError(invalid) when the login is not linked to the caller (the text lists the
   *   linked logins) or the GitHub App is not installed there; (unavailable) when GitHub fails.
   */
  async createAccessToken(caller: Account, accountLogin?: string): Promise<{ token: string; expiresAt: string; host: RepoHostKind }> {
    const login = accountLogin ?? caller.login;
    const githubLogin = await this.linkedGitHubLogin(caller, login);
    if (githubLogin !== undefined) {
      const token = await this.github!.installationToken(githubLogin);
      return { ...token, host: 'github' };
    }
    if (login.toLowerCase() === caller.login.toLowerCase()) {
      return { ...(await this.accessTokens.mint(caller.id)), host: 'builtin' };
    }
    const linked = [`"${caller.login}" (the built-in git host)`];
    if (this.github) linked.push(...(await this.githubLinks.list(caller.id)).map((l) => `"${l}" (GitHub)`));
    throw invalid(
      `The repository-host account "${login}" is not linked to your Backyard account. Linked accounts: ${linked.join(', ')}. ` +
        (this.github
          ? `Leave accountLogin out to use your own, or ask the administrator to link a GitHub account with: backyard account link ${caller.login} --github ${login}`
          : 'Leave accountLogin out to use your own.'),
    );
  }

  /** Which host serves repositories of `ownerLogin` for `caller` (see the class comment). */
  async hostFor(caller: Account, ownerLogin: string): Promise<RepoHostKind> {
    return (await this.linkedGitHubLogin(caller, ownerLogin)) === undefined ? 'builtin' : 'github';
  }

  /** The logins `caller` may mint tokens for: its own (built-in host) and, with GitHub configured, its linked GitHub accounts. */
  async linkedLogins(caller: Account): Promise<{ builtin: string; github: string[] }> {
    return { builtin: caller.login, github: this.github ? await this.githubLinks.list(caller.id) : [] };
  }

  // ---- The built-in host's HTTP access ----

  /**
   * The account a git HTTP password (Basic auth) stands for: an account token, or an unexpired
   * access token from operation 7. Undefined for anything else.
   */
  async authenticate(secret: string): Promise<Account | undefined> {
    if (secret === '') return undefined;
    return (await this.accessTokens.verify(secret)) ?? (await this.accounts.authenticate(secret));
  }

  /** The public address of a built-in repository, without credentials: `http://localhost:4000/git/<owner>/<repo>.git`. */
  publicUrl(owner: string, repo: string): string {
    return `${this.urls.base}/git${this.builtin.projectPath(owner, repo)}`;
  }

  // ---- For Web Apps ----

  /**
   * Where Backyard itself clones `<owner>/<repo>` from for `caller`: the built-in repository's
   * path, or a GitHub clone address with a fresh installation token.
   * @throws ManagementError(invalid) when the built-in repository does not exist or belongs to
   *   another account (the same text for both: nothing leaks), or the GitHub login is not usable.
   */
  async source(caller: Account, owner: string, repo: string): Promise<RepositorySource> {
    const githubLogin = await this.linkedGitHubLogin(caller, owner);
    if (githubLogin !== undefined) {
      const { token } = await this.github!.installationToken(githubLogin);
      const url = this.github!.cloneUrl(githubLogin, repo, token);
      return { host: 'github', url, displayUrl: `${this.github!.webUrl}/${githubLogin}/${repo}.git` };
    }
    const mine = owner.toLowerCase() === caller.login.toLowerCase();
    if (!mine || !this.builtin.exists(owner, repo)) {
      throw invalid(`The repository ${owner}/${repo} does not exist on the built-in git host. Push it first (a push to a new repository of your own login creates it).`);
    }
    return { host: 'builtin', url: this.builtin.localPath(owner, repo), displayUrl: this.publicUrl(owner, repo) };
  }

  /** Path of the built-in bare repository `<owner>/<repo>` (see `BuiltinGitHost.localPath`). */
  localPath(owner: string, repo: string): string {
    return this.builtin.localPath(owner, repo);
  }

  /** True when the built-in repository exists. */
  exists(owner: string, repo: string): boolean {
    return this.builtin.exists(owner, repo);
  }

  /** Default branch of a built-in repository (see `BuiltinGitHost.defaultBranch`). */
  defaultBranch(owner: string, repo: string): Promise<string | undefined> {
    return this.builtin.defaultBranch(owner, repo);
  }

  /** Head commit SHA of a branch of a built-in repository, or undefined (see `BuiltinGitHost.resolveBranch`). */
  resolveBranch(owner: string, repo: string, branch: string): Promise<string | undefined> {
    return this.builtin.resolveBranch(owner, repo, branch);
  }

  /** Whether a file exists at a ref of a built-in repository (see `BuiltinGitHost.hasFile`). */
  hasFile(owner: string, repo: string, ref: string, filePath: string): Promise<boolean> {
    return this.builtin.hasFile(owner, repo, ref, filePath);
  }

  /** Subscribes to pushes to the built-in host (see `BuiltinGitHost.onPush`). @returns the unsubscribe function. */
  onPush(listener: PushListener): () => void {
    return this.builtin.onPush(listener);
  }

  /** The linked GitHub spelling of `login` when GitHub is configured and `login` is linked to `caller`. */
  private async linkedGitHubLogin(caller: Account, login: string): Promise<string | undefined> {
    return this.github ? this.githubLinks.find(caller.id, login) : undefined;
  }
}

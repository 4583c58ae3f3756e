import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Account, TokenLimits } from './accounts/service.js';
import type { AppServerSettings, BackendApp, BackendAppKeys, BackendAppSummary } from './backendapps/service.js';
import type { DeployResult } from './backendapps/cloudCode/service.js';
import type { CloudCodeChange } from './backendapps/cloudCode/plan.js';
import type { CloudCodeVersion } from './backendapps/cloudCode/versions.js';
import type { Guide } from './guides/service.js';
import type { PublicUrls } from './urls.js';
import type { BackendApiCall } from '../data/service.js';
import type { DataApps } from '../data/apps.js';
import type { CloudRuntime } from '../data/cloud/types.js';
import type { CommandExecution, CreatedEnvironment, DevelopmentEnvironment, EnvironmentActivity, EnvironmentImageText, ExecutionSummary } from './devenvs/service.js';
import type { RepoHostKind } from './repohost/service.js';
import type { BuiltinGitHost } from './repohost/builtin.js';
import type { GitHubAppHost, GitHubLinks } from './repohost/github.js';
import type { DeploymentSummary } from './webapps/service.js';
import type { LogRow, RouteRow } from './webapps/store.js';
import type { CreateWebAppInput, Deployment, LogOptions, UpdateWebAppInput, WebApp } from './webapps/types.js';
import type { AuthorizationCheck, AuthorizationParams, AuthorizationRequest, GrantSummary, VerifiedAccess } from './oauth/service.js';
import type { OAuthTokens } from '@modelcontextprotocol/server';
import type { OAuthClients } from './oauth/clients.js';
import type { Scope } from './oauth/scopes.js';
import type { DashboardSession } from './dashboard/sessions.js';

/*
 * The domain services, one interface per area, as the operation handlers (tools/) and the front ends
 * (src/server, src/mcp, src/api, the CLI) use them (style.md, examples 10 and 14; supabase-mcp's
 * `platform/types.ts` declares one `*Operations` type per area the same way). The classes in each
 * area's folder implement them; `openPlatform` (platform.ts) builds them. Each member's rules,
 * errors and texts are documented on the implementing method.
 */

/** Accounts and their API tokens (accounts/service.ts `AccountService`). */
export interface AccountOperations {
  /** Creates an account with its first token. @throws ManagementError(conflict) when the login is taken. */
  create(login: string): Promise<{ account: Account; token: string }>;
  /** The account of `login`, created when it does not exist yet. */
  ensure(login: string): Promise<Account>;
  /** A new token of an account, with its limits; the clear token is returned once and never stored. */
  issueToken(accountId: string, kind: 'user' | 'forward', limits?: TokenLimits): Promise<string>;
  /** Ends a token (a forwarding `backyard mcp` process at exit). */
  revokeToken(token: string): Promise<void>;
  /** The account of a bearer token, or undefined. */
  authenticate(token: string): Promise<Account | undefined>;
  /** The account of a bearer token with the token's limits, or undefined. */
  authenticateWithLimits(token: string): Promise<{ account: Account; limits: TokenLimits } | undefined>;
  /** How many accounts exist. */
  count(): Promise<number>;
  findByLogin(login: string): Promise<Account | undefined>;
  list(): Promise<Account[]>;
}

/** The bundled guides (guides/service.ts `GuideService`). */
export interface GuideOperations {
  titles(): string[];
  get(title: string): Guide | undefined;
  all(): Guide[];
}

/** Backend Apps: records, keys, server options, web hosting (backendapps/service.ts `BackendAppService`). */
export interface BackendAppOperations {
  create(accountId: string, appName: string, given?: Partial<BackendAppKeys>, settings?: Record<string, unknown>): Promise<BackendApp>;
  list(accountId: string, appName?: string): Promise<BackendAppSummary[]>;
  /** One of the account's apps, or undefined (another account's too). */
  get(accountId: string, appId: string): Promise<BackendApp | undefined>;
  /** @returns the app's public web hosting URL, or undefined for an app the account does not own. */
  activateHosting(accountId: string, appId: string): Promise<string | undefined>;
  /** @throws ManagementError(notFound) when the account has no such app. */
  delete(accountId: string, appId: string): Promise<void>;
  /** The account that owns an app, whoever asks (the CLI, for the machine's owner). */
  owner(appId: string): Promise<string | undefined>;
  /** The app served on a hosting subdomain. */
  hostedApp(subdomain: string): Promise<string | undefined>;
  keys(appId: string): Promise<(BackendAppKeys & { appName: string }) | undefined>;
  serverSettings(appId: string): Promise<AppServerSettings | undefined>;
  /** Changes an app's server options. @throws SettingRefused naming the option and why. */
  configure(appId: string, changes: Record<string, unknown>): Promise<AppServerSettings>;
}

/** Each Backend App's cloud code files: deployCloudCode, getCloudCode and their versions (backendapps/cloudCode/service.ts `CloudCodeService`). */
export interface CloudCodeOperations {
  /** The folder of an app's cloud code tree. */
  tree(appId: string): string;
  deploy(accountId: string, appId: string, changes: readonly CloudCodeChange[], progress?: (message: string) => void): Promise<DeployResult>;
  read(accountId: string, appId: string, treePath?: string, recursive?: boolean): Promise<string>;
  /** The app's kept versions of its tree, newest first (getCloudCodeVersions). */
  versions(accountId: string, appId: string): Promise<CloudCodeVersion[]>;
  /** Puts a kept version's files back as a new version (rollbackCloudCode). @throws ManagementError(notFound) for an unknown version. */
  rollback(accountId: string, appId: string, version: number, progress?: (message: string) => void): Promise<DeployResult>;
}

/** The data API of every Backend App (Interface B) as the platform calls it (data/service.ts `DataApiService`). */
export interface DataApiOperations {
  /** The apps' engines, keys, settings, folders and outboxes. */
  readonly apps: DataApps;
  /** `callBackendAPI`: runs calls with the master key, in order. @throws BadCallError for a url the spec's rules refuse. */
  call(applicationId: string, calls: readonly BackendApiCall[]): Promise<Array<{ code: number; body: unknown }>>;
}

/** Development environments and command executions on Docker (devenvs/service.ts `DevEnvService`). */
export interface DevEnvOperations {
  create(accountId: string, chatTitle: string, progress?: (message: string) => void): Promise<CreatedEnvironment>;
  list(accountId: string, chatTitle?: string): Promise<DevelopmentEnvironment[]>;
  /** What the guides and tool descriptions say of the environments' image. */
  imageText(): EnvironmentImageText;
  /** How containers reach this server (`backyard.internal`); the HTTP server gives it once it listens. */
  serveContainersWith(open: (address: string) => Promise<string>): void;
  execute(accountId: string, environmentId: string, command: string, signal?: AbortSignal, progress?: (message: string) => void): Promise<CommandExecution>;
  interact(accountId: string, environmentId: string, executionId: string, action: { stdin?: string; exit?: boolean }, signal?: AbortSignal): Promise<CommandExecution>;
  inspect(accountId: string, environmentId: string, executionId: string): Promise<CommandExecution>;
  executions(accountId: string, environmentId: string, limit?: number): Promise<ExecutionSummary[]>;
  activity(accountId: string, environmentId: string): Promise<EnvironmentActivity>;
  executionSummary(accountId: string, environmentId: string, executionId: string): Promise<ExecutionSummary>;
  restart(accountId: string, environmentId: string): Promise<DevelopmentEnvironment>;
  remove(accountId: string, environmentId: string): Promise<void>;
  ownerOf(environmentId: string): Promise<string | undefined>;
  /** Marks failed what a stopped process left unfinished (the platform calls it when it opens). */
  recoverInterrupted(): Promise<void>;
  close(): Promise<void>;
}

/** The built-in git host, repository access tokens and the GitHub App (repohost/service.ts `RepoHostService`). */
export interface RepoHostOperations {
  /** The built-in git host's repositories (`/git`). */
  readonly builtin: Pick<BuiltinGitHost, 'root' | 'create' | 'exists' | 'list' | 'projectPath' | 'receivePush'>;
  /** Which GitHub logins an account may deploy from. */
  readonly githubLinks: Pick<GitHubLinks, 'link' | 'unlink' | 'list'>;
  /** The GitHub App; undefined when none is configured. */
  readonly github?: Pick<GitHubAppHost, 'installationToken'>;
  createAccessToken(caller: Account, accountLogin?: string): Promise<{ token: string; expiresAt: string; host: RepoHostKind }>;
  /** The account of a repository access token or an account token (git over HTTP), or undefined. */
  authenticate(secret: string): Promise<Account | undefined>;
  /** The clone URL of a built-in repository. */
  publicUrl(owner: string, repo: string): string;
}

/** Web Apps: deployments on Docker and the reverse proxy behind their appURL (webapps/service.ts `WebAppService`). */
export interface WebAppOperations {
  /** Where a Web App's subdomain is answered (webapps/proxy.ts). */
  readonly proxy: {
    route(subdomain: string): Promise<RouteRow | undefined>;
    web(req: IncomingMessage, res: ServerResponse, route: RouteRow): void;
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, route: RouteRow): void;
  };
  create(account: Account, input: CreateWebAppInput): Promise<WebApp>;
  list(accountId: string, appName?: string): Promise<Array<{ appId: string; appName: string }>>;
  get(accountId: string, appId: string): Promise<WebApp>;
  update(account: Account, appId: string, input: UpdateWebAppInput): Promise<WebApp>;
  deploy(account: Account, appId: string): Promise<Deployment>;
  follow(accountId: string, appId: string, deploymentId: string, report: (message: string) => void, signal?: AbortSignal): Promise<Deployment>;
  deployment(accountId: string, appId: string, deploymentId: string, options?: LogOptions): Promise<Deployment & { buildLogs: LogRow[]; containersLogs: LogRow[] }>;
  deployments(accountId: string, appId: string, limit?: number): Promise<DeploymentSummary[]>;
  stop(accountId: string, appId: string): Promise<WebApp>;
  startApp(accountId: string, appId: string): Promise<WebApp>;
  remove(accountId: string, appId: string): Promise<void>;
  ownerOf(appId: string): Promise<string | undefined>;
  /** Finds active Web App containers again and starts auto-deploy polling (the HTTP server calls it once it listens). */
  start(): void;
  recoverInterrupted(): Promise<void>;
  close(): Promise<void>;
}

/** The authorization server of MCP (oauth/service.ts `OAuthService`; OAuth 2.1, RFC 7636, RFC 8707). */
export interface OAuthOperations {
  /** Registered and metadata-document clients. */
  readonly clients: OAuthClients;
  /** The resource identifier of this server's MCP endpoint, e.g. `http://localhost:4000/mcp`. */
  readonly resource: () => string;
  /** This authorization server's issuer identifier (RFC 8414 §2), e.g. `http://localhost:4000`. */
  readonly issuer: () => string;
  checkAuthorizationRequest(params: AuthorizationParams): Promise<AuthorizationCheck>;
  issueCode(account: Account, request: AuthorizationRequest, scopes: readonly Scope[]): Promise<string>;
  exchangeCode(params: { code?: string; client_id?: string; redirect_uri?: string; code_verifier?: string; resource?: string }): Promise<OAuthTokens>;
  refresh(params: { refresh_token?: string; client_id?: string; scope?: string; resource?: string }): Promise<OAuthTokens>;
  revoke(params: { token?: string; client_id?: string }): Promise<void>;
  verifyAccessToken(token: string): Promise<VerifiedAccess | { problem: string }>;
  grantsOf(accountId: string): Promise<GrantSummary[]>;
  revokeGrant(accountId: string, grantId: string): Promise<boolean>;
}

/** Dashboard sign-in: sessions and one-time sign-in links (dashboard/sessions.ts `DashboardSessions`). */
export interface DashboardSessionOperations {
  /** Starts a session: the token for the cookie (never stored in clear) and the session. */
  create(account: Account): Promise<{ token: string; session: DashboardSession }>;
  /** The live session of a cookie's token, or undefined when unknown, ended or expired. */
  find(token: string | undefined): Promise<DashboardSession | undefined>;
  /** Ends a session (sign-out); unknown ones are ignored. */
  end(hash: Buffer): Promise<void>;
  /** A one-time sign-in code for an account (`backyard dashboard`). */
  createLinkCode(accountId: string): Promise<string>;
  /** The account a sign-in code would sign in, without using it up. */
  peekLinkCode(code: string | undefined): Promise<Account | undefined>;
  /** Uses up a sign-in code: the account it signs in, or undefined. */
  redeemLinkCode(code: string | undefined): Promise<Account | undefined>;
  /** The account of a bearer token (signing in with an account token). */
  authenticateToken(token: string): Promise<Account | undefined>;
}

/**
 * The domain services the operation handlers and the front ends call (style.md, example 10:
 * services are interfaces, handlers are thin); built by `openPlatform`.
 */
export interface Services {
  urls: PublicUrls;
  accounts: AccountOperations;
  guides: GuideOperations;
  backendApps: BackendAppOperations;
  /** The data API of every Backend App (Interface B) and `callBackendAPI`. */
  dataApi: DataApiOperations;
  /** Each Backend App's cloud code worker. */
  cloud: CloudRuntime;
  /** Each Backend App's cloud code files: deployCloudCode and getCloudCode. */
  cloudCode: CloudCodeOperations;
  /** Development environments and command executions on Docker. */
  devenvs: DevEnvOperations;
  /** The built-in git host, repository access tokens and the GitHub App. */
  repoHost: RepoHostOperations;
  /** Web Apps: deployments on Docker and the reverse proxy behind their appURL. */
  webApps: WebAppOperations;
  /** MCP's authorization server: the OAuth endpoints, `/mcp`'s bearer check, the dashboard's consent and connections pages. */
  oauth: OAuthOperations;
  /** Dashboard sessions and one-time sign-in links. */
  dashboardSessions: DashboardSessionOperations;
}

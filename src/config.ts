import { createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LOGIN_PATTERN } from './platform/accounts/login.js';
import { PER_ACCOUNT } from './platform/devenvs/networks.js';

/**
 * Backyard's configuration: environment variables first, command-line flags over them.
 * Every part of Backyard reads its settings from one `Config` built here; nothing else reads
 * `process.env` for settings.
 *
 * Variables (README, "Configuration"):
 * - `BACKYARD_HOME`        state folder (default `~/.backyard`)
 * - `BACKYARD_HOST`        address the HTTP server binds to (default `127.0.0.1`, loopback: design.md, "Security stance")
 * - `BACKYARD_PORT`        TCP port of the HTTP server (default 4000; 0 picks a free port)
 * - `BACKYARD_PUBLIC_URL`  the URL people and clients use to reach the server (default `http://localhost:<port>`)
 * - `BACKYARD_ACCOUNT`     the account that `backyard mcp` (stdio) acts as (default `local`)
 * - `BACKYARD_LOG_LEVEL`   pino level: fatal, error, warn, info, debug, trace, silent (default `info`)
 * - `BACKYARD_ALLOWED_ORIGINS` comma-separated extra origins allowed to call `/mcp` (browser clients)
 * - `BACKYARD_HOSTING_DOMAIN` the wildcard domain of hosted sites (default: the public URL's host,
 *   `localhost`, so sites are `http://<sub>.localhost:4000/`; browsers resolve `*.localhost` to loopback)
 * - `BACKYARD_FUNCTION_TIMEOUT_MS` how long a cloud function or trigger may run (default 30000)
 * - `BACKYARD_JOB_TIMEOUT_MS` how long a cloud job may run (default 900000)
 * - `BACKYARD_CLOUD_MEMORY_MB` heap cap of each app's cloud code worker (default 256)
 * - `BACKYARD_CLOUD_IDLE_MS` how long a cloud code worker may sit without calls before it is stopped
 *   (default 300000; the next call starts it again)
 * - `BACKYARD_CLOUD_CONFINEMENT` how cloud code workers are confined: `auto` (default: a bubblewrap
 *   sandbox when one can be made here, else Node's permission model alone, said once at start),
 *   `sandbox` (cloud code runs only in the sandbox), `none` (the permission model alone)
 * - `BACKYARD_CLOUD_NETWORK` `public` (default: sandboxed cloud code reaches public internet addresses
 *   through Backyard) or `none` (only its own app's data API)
 * - `BACKYARD_CLOUD_ALLOW_HOSTS` comma-separated `host:port` pairs that sandboxed cloud code may reach
 *   although they are loopback or private addresses (an internal service of yours)
 * - `DOCKER_HOST`          the Docker engine (default: the local socket, as the docker CLI does)
 * - `BACKYARD_DEVENV_IMAGE` image of development environments (default `alpine:3.20`; offline:
 *   `backyard/devenv:offline`, built by `backyard image build-offline`)
 * - `BACKYARD_EXEC_WAIT_MS` how long executeCommand waits for a command to exit before answering
 *   `running` (default 15000: design.md, decision 9)
 * - `BACKYARD_DEVENV_MEMORY_MB`, `BACKYARD_DEVENV_CPUS`, `BACKYARD_DEVENV_PIDS` limits of each
 *   development environment container (defaults 1024 MiB, 1 CPU, 512 processes)
 * - `BACKYARD_DEVENV_NETWORK` Docker network of development environments: `per-account` (default: each
 *   account's environments and Web Apps on a network of their own, design.md "Security stance"), or a
 *   network name that the environments of all accounts then share (`bridge`; `none` cuts them off)
 * - `BACKYARD_GITHUB_APP_ID` the GitHub App whose installations give repository access tokens (design.md,
 *   decision 10); with `BACKYARD_GITHUB_PRIVATE_KEY` (the PEM text) or `BACKYARD_GITHUB_PRIVATE_KEY_FILE`
 *   (a path to it). Unset: only the built-in git host answers.
 * - `BACKYARD_GITHUB_API_URL` GitHub's REST API (default `https://api.github.com`; GitHub Enterprise
 *   Server: `https://<host>/api/v3`)
 * - `BACKYARD_WEBAPP_MEMORY_MB`, `BACKYARD_WEBAPP_CPUS` limits of each Web App container (defaults 512 MiB, 1 CPU)
 * - `BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS` how long a new container has to answer its health check with 2xx or
 *   3xx before its deployment fails (default 60000)
 * - `BACKYARD_WEBAPP_BUILD_TIMEOUT_MS` how long cloning and building a Web App's image may take (default 900000)
 * - `BACKYARD_WEBAPP_POLL_MS` how often the branch head of GitHub Web Apps with autoDeploy is checked
 *   (default 60000; the built-in git host deploys at once on push)
 */
export interface Config {
  /** Absolute path of the state folder. */
  home: string;
  host: string;
  /** 0 means "any free port"; the bound port is then known only after listening. */
  port: number;
  /** Without a trailing slash; undefined means "derive from the bound port". */
  publicUrl: string | undefined;
  account: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Origins (scheme://host[:port]) accepted on `/mcp` besides the server's own and loopback ones. */
  allowedOrigins: string[];
  /** Hosted sites answer at `<sub>.<hostingDomain>`; undefined means the public URL's host. */
  hostingDomain: string | undefined;
  /** Milliseconds a cloud function or trigger may run before its worker is restarted. */
  functionTimeoutMs: number;
  jobTimeoutMs: number;
  cloudMemoryMb: number;
  /** Milliseconds without calls after which a cloud code worker is stopped. */
  cloudIdleMs: number;
  /** How cloud code workers are confined (src/data/cloud/sandbox.ts). */
  cloudConfinement: 'auto' | 'sandbox' | 'none';
  /** Whether sandboxed cloud code reaches public addresses (through the egress proxy). */
  cloudNetwork: 'public' | 'none';
  /** `host:port` pairs sandboxed cloud code may reach although they are not public addresses. */
  cloudAllowHosts: string[];
  /** `DOCKER_HOST` as the docker CLI reads it (`unix:///…`, `tcp://host:port`); undefined: the default socket. */
  dockerHost: string | undefined;
  /** Image reference of development environment containers. */
  devenvImage: string;
  /** Milliseconds executeCommand waits for the command to exit before answering `running`. */
  execWaitMs: number;
  /** Memory limit of each development environment in MiB (no swap beyond it). */
  devenvMemoryMb: number;
  /** CPU limit of each development environment, in CPUs (fractions allowed). */
  devenvCpus: number;
  /** Process (pids) limit of each development environment. */
  devenvPids: number;
  /**
   * Network of development environments: `per-account` (`PER_ACCOUNT`: the account's own network), or a
   * Docker network mode all accounts share: `bridge`, `none`, or a network name (`host` is refused).
   */
  devenvNetwork: string;
  /** The GitHub App of the repository host, when configured (both its id and its private key). */
  github: GitHubAppConfig | undefined;
  // ---- Web Apps (issue 6) ----
  /** Memory limit of each Web App container in MiB (no swap beyond it). */
  webappMemoryMb: number;
  /** CPU limit of each Web App container, in CPUs (fractions allowed). */
  webappCpus: number;
  /** Milliseconds a new container has to pass its health check. */
  webappHealthTimeoutMs: number;
  /** Milliseconds cloning and building one deployment may take. */
  webappBuildTimeoutMs: number;
  /** Milliseconds between two checks of the branch head of GitHub Web Apps with autoDeploy. */
  webappPollMs: number;
}

/** A GitHub App's credentials and the API it talks to. */
export interface GitHubAppConfig {
  /** The App ID (or Client ID), the `iss` of the app's JWTs. */
  appId: string;
  /** The app's private key as PKCS#8 PEM (GitHub hands out PKCS#1; it is converted on load). */
  privateKey: string;
  /** REST API root without a trailing slash, e.g. `https://api.github.com`. */
  apiUrl: string;
}

/** Flags from the command line; each overrides its environment variable. */
export interface ConfigOverrides {
  home?: string;
  host?: string;
  port?: string | number;
  publicUrl?: string;
}

const portSchema = z.coerce
  .number({ message: 'must be a number' })
  .int('must be a whole number')
  .min(0, 'must be between 0 and 65535')
  .max(65535, 'must be between 0 and 65535');

const configSchema = z.object({
  home: z.string().min(1, 'must not be empty'),
  host: z.string().min(1, 'must not be empty'),
  port: portSchema,
  publicUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http or https URL' })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  account: z.string().regex(LOGIN_PATTERN, 'must be a login of 1 to 39 letters, digits or single dashes'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  allowedOrigins: z.array(z.url({ message: 'must be origins like https://example.com' })),
  hostingDomain: z
    .string()
    .regex(/^(?=.{1,200}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i, 'must be a domain name such as apps.example.com')
    .optional(),
  functionTimeoutMs: z.coerce.number({ message: 'must be a number' }).int().min(100, 'must be at least 100').max(3_600_000, 'must be at most 3600000'),
  jobTimeoutMs: z.coerce.number({ message: 'must be a number' }).int().min(100, 'must be at least 100').max(86_400_000, 'must be at most 86400000'),
  cloudMemoryMb: z.coerce.number({ message: 'must be a number' }).int().min(32, 'must be at least 32').max(16_384, 'must be at most 16384'),
  cloudIdleMs: z.coerce.number({ message: 'must be a number' }).int().min(100, 'must be at least 100').max(86_400_000, 'must be at most 86400000'),
  cloudConfinement: z.enum(['auto', 'sandbox', 'none'], { message: 'must be auto, sandbox or none' }),
  cloudNetwork: z.enum(['public', 'none'], { message: 'must be public or none' }),
  cloudAllowHosts: z.array(z.string().regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/i, 'must be host:port pairs such as 10.0.0.5:8080, separated by commas')),
  dockerHost: z
    .string()
    .regex(/^(unix|npipe|tcp|http|https|ssh):\/\/./, 'must be like unix:///var/run/docker.sock or tcp://host:2375')
    .optional(),
  devenvImage: z.string().regex(/^[a-z0-9][a-z0-9._\/:@-]{0,254}$/i, 'must be an image reference such as alpine:3.20'),
  execWaitMs: z.coerce.number({ message: 'must be a number' }).int().min(0, 'must be at least 0').max(600_000, 'must be at most 600000'),
  devenvMemoryMb: z.coerce.number({ message: 'must be a number' }).int().min(16, 'must be at least 16').max(1_048_576, 'must be at most 1048576'),
  devenvCpus: z.coerce.number({ message: 'must be a number' }).min(0.01, 'must be at least 0.01').max(1024, 'must be at most 1024'),
  devenvPids: z.coerce.number({ message: 'must be a number' }).int().min(16, 'must be at least 16').max(1_000_000, 'must be at most 1000000'),
  devenvNetwork: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, `must be ${PER_ACCOUNT} (each account's containers on a network of their own) or a Docker network name such as bridge or none`)
    .refine((n) => n === PER_ACCOUNT || !/^per[-_.]?account$/i.test(n), `must be written ${PER_ACCOUNT}, in lowercase with a dash, for a network per account`)
    .refine((n) => n !== 'host' && !n.startsWith('container:'), 'must not share the host\'s network (host is refused)'),
  githubAppId: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be the GitHub App\'s App ID, such as 123456').optional(),
  githubApiUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http or https URL such as https://api.github.com' })
    .transform((u) => u.replace(/\/+$/, '')),
  webappMemoryMb: z.coerce.number({ message: 'must be a number' }).int().min(16, 'must be at least 16').max(1_048_576, 'must be at most 1048576'),
  webappCpus: z.coerce.number({ message: 'must be a number' }).min(0.01, 'must be at least 0.01').max(1024, 'must be at most 1024'),
  webappHealthTimeoutMs: z.coerce.number({ message: 'must be a number' }).int().min(500, 'must be at least 500').max(3_600_000, 'must be at most 3600000'),
  webappBuildTimeoutMs: z.coerce.number({ message: 'must be a number' }).int().min(1000, 'must be at least 1000').max(86_400_000, 'must be at most 86400000'),
  webappPollMs: z.coerce.number({ message: 'must be a number' }).int().min(1000, 'must be at least 1000').max(86_400_000, 'must be at most 86400000'),
});

/** Names of the variables behind each config key, used in error messages. */
const variableOf: Record<string, string> = {
  home: 'BACKYARD_HOME (--home)',
  host: 'BACKYARD_HOST (--host)',
  port: 'BACKYARD_PORT (--port)',
  publicUrl: 'BACKYARD_PUBLIC_URL',
  account: 'BACKYARD_ACCOUNT',
  logLevel: 'BACKYARD_LOG_LEVEL',
  allowedOrigins: 'BACKYARD_ALLOWED_ORIGINS',
  hostingDomain: 'BACKYARD_HOSTING_DOMAIN',
  functionTimeoutMs: 'BACKYARD_FUNCTION_TIMEOUT_MS',
  jobTimeoutMs: 'BACKYARD_JOB_TIMEOUT_MS',
  cloudMemoryMb: 'BACKYARD_CLOUD_MEMORY_MB',
  cloudIdleMs: 'BACKYARD_CLOUD_IDLE_MS',
  cloudConfinement: 'BACKYARD_CLOUD_CONFINEMENT',
  cloudNetwork: 'BACKYARD_CLOUD_NETWORK',
  cloudAllowHosts: 'BACKYARD_CLOUD_ALLOW_HOSTS',
  dockerHost: 'DOCKER_HOST',
  devenvImage: 'BACKYARD_DEVENV_IMAGE',
  execWaitMs: 'BACKYARD_EXEC_WAIT_MS',
  devenvMemoryMb: 'BACKYARD_DEVENV_MEMORY_MB',
  devenvCpus: 'BACKYARD_DEVENV_CPUS',
  devenvPids: 'BACKYARD_DEVENV_PIDS',
  devenvNetwork: 'BACKYARD_DEVENV_NETWORK',
  githubAppId: 'BACKYARD_GITHUB_APP_ID',
  githubApiUrl: 'BACKYARD_GITHUB_API_URL',
  webappMemoryMb: 'BACKYARD_WEBAPP_MEMORY_MB',
  webappCpus: 'BACKYARD_WEBAPP_CPUS',
  webappHealthTimeoutMs: 'BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS',
  webappBuildTimeoutMs: 'BACKYARD_WEBAPP_BUILD_TIMEOUT_MS',
  webappPollMs: 'BACKYARD_WEBAPP_POLL_MS',
};

/** Thrown for a configuration value that does not validate; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

/**
 * Builds the configuration from `env` (normally `process.env`) and command-line overrides.
 * @throws ConfigError naming the variable and what is wrong with it.
 */
export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const rawHome = overrides.home ?? nonEmpty(env.BACKYARD_HOME) ?? path.join(os.homedir(), '.backyard');
  const raw = {
    home: path.resolve(rawHome),
    host: overrides.host ?? nonEmpty(env.BACKYARD_HOST) ?? '127.0.0.1',
    port: overrides.port ?? nonEmpty(env.BACKYARD_PORT) ?? 4000,
    publicUrl: overrides.publicUrl ?? nonEmpty(env.BACKYARD_PUBLIC_URL),
    account: nonEmpty(env.BACKYARD_ACCOUNT) ?? 'local',
    logLevel: nonEmpty(env.BACKYARD_LOG_LEVEL) ?? 'info',
    allowedOrigins: (nonEmpty(env.BACKYARD_ALLOWED_ORIGINS) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    hostingDomain: nonEmpty(env.BACKYARD_HOSTING_DOMAIN)?.toLowerCase(),
    functionTimeoutMs: nonEmpty(env.BACKYARD_FUNCTION_TIMEOUT_MS) ?? 30_000,
    jobTimeoutMs: nonEmpty(env.BACKYARD_JOB_TIMEOUT_MS) ?? 900_000,
    cloudMemoryMb: nonEmpty(env.BACKYARD_CLOUD_MEMORY_MB) ?? 256,
    cloudIdleMs: nonEmpty(env.BACKYARD_CLOUD_IDLE_MS) ?? 300_000,
    cloudConfinement: nonEmpty(env.BACKYARD_CLOUD_CONFINEMENT) ?? 'auto',
    cloudNetwork: nonEmpty(env.BACKYARD_CLOUD_NETWORK) ?? 'public',
    cloudAllowHosts: (nonEmpty(env.BACKYARD_CLOUD_ALLOW_HOSTS) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    dockerHost: nonEmpty(env.DOCKER_HOST),
    devenvImage: nonEmpty(env.BACKYARD_DEVENV_IMAGE) ?? 'alpine:3.20',
    execWaitMs: nonEmpty(env.BACKYARD_EXEC_WAIT_MS) ?? 15_000,
    devenvMemoryMb: nonEmpty(env.BACKYARD_DEVENV_MEMORY_MB) ?? 1024,
    devenvCpus: nonEmpty(env.BACKYARD_DEVENV_CPUS) ?? 1,
    devenvPids: nonEmpty(env.BACKYARD_DEVENV_PIDS) ?? 512,
    devenvNetwork: nonEmpty(env.BACKYARD_DEVENV_NETWORK) ?? PER_ACCOUNT,
    githubAppId: nonEmpty(env.BACKYARD_GITHUB_APP_ID),
    githubApiUrl: nonEmpty(env.BACKYARD_GITHUB_API_URL) ?? 'https://api.github.com',
    webappMemoryMb: nonEmpty(env.BACKYARD_WEBAPP_MEMORY_MB) ?? 512,
    webappCpus: nonEmpty(env.BACKYARD_WEBAPP_CPUS) ?? 1,
    webappHealthTimeoutMs: nonEmpty(env.BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS) ?? 60_000,
    webappBuildTimeoutMs: nonEmpty(env.BACKYARD_WEBAPP_BUILD_TIMEOUT_MS) ?? 900_000,
    webappPollMs: nonEmpty(env.BACKYARD_WEBAPP_POLL_MS) ?? 60_000,
  };
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    throw new ConfigError(`Invalid configuration: ${variableOf[key] ?? key} ${issue.message}.`);
  }
  const { githubAppId, githubApiUrl, ...settings } = parsed.data;
  return {
    ...settings,
    publicUrl: parsed.data.publicUrl,
    hostingDomain: parsed.data.hostingDomain,
    dockerHost: parsed.data.dockerHost,
    github: githubAppConfig(githubAppId, githubApiUrl, env),
  };
}

/**
 * The GitHub App settings: none when neither the app id nor a key is set; a ConfigError when only
 * one half is, or when the key is not a readable RSA private key.
 */
function githubAppConfig(appId: string | undefined, apiUrl: string, env: NodeJS.ProcessEnv): GitHubAppConfig | undefined {
  const inline = nonEmpty(env.BACKYARD_GITHUB_PRIVATE_KEY);
  const file = nonEmpty(env.BACKYARD_GITHUB_PRIVATE_KEY_FILE);
  if (appId === undefined && inline === undefined && file === undefined) return undefined;
  if (appId === undefined) {
    throw new ConfigError('Invalid configuration: BACKYARD_GITHUB_APP_ID must be set when a GitHub App private key is given.');
  }
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError('Invalid configuration: set BACKYARD_GITHUB_PRIVATE_KEY or BACKYARD_GITHUB_PRIVATE_KEY_FILE, not both.');
  }
  let pem: string;
  if (inline !== undefined) {
    // A PEM put on one line (as .env files often hold it) carries its newlines as "\n".
    pem = inline.replace(/\\n/g, '\n');
  } else if (file !== undefined) {
    try {
      pem = fs.readFileSync(path.resolve(file), 'utf8');
    } catch (error) {
      throw new ConfigError(`Invalid configuration: BACKYARD_GITHUB_PRIVATE_KEY_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  } else {
    throw new ConfigError('Invalid configuration: BACKYARD_GITHUB_APP_ID needs the app\'s private key in BACKYARD_GITHUB_PRIVATE_KEY or BACKYARD_GITHUB_PRIVATE_KEY_FILE.');
  }
  let privateKey: string;
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
    privateKey = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  } catch {
    throw new ConfigError('Invalid configuration: the GitHub App private key must be the RSA private key (PEM) downloaded from the app\'s settings.');
  }
  return { appId, privateKey, apiUrl };
}

/** Folder and file layout under `BACKYARD_HOME` (design.md, "State"). */
export const homePaths = (home: string) => ({
  platformDb: path.join(home, 'platform.db'),
  apps: path.join(home, 'apps'),
  app: (appId: string) => path.join(home, 'apps', appId),
  git: path.join(home, 'git'),
  /** Web App deployments clone their branch here, one folder each, removed after the build. */
  webappWork: path.join(home, 'webapps', 'work'),
  /** Written by a running server so that `backyard mcp` can find and forward to it. */
  serverFile: path.join(home, 'run', 'server.json'),
});

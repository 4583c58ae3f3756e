import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LOGIN_PATTERN } from './platform/accounts/login.js';

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
  };
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    throw new ConfigError(`Invalid configuration: ${variableOf[key] ?? key} ${issue.message}.`);
  }
  return { ...parsed.data, publicUrl: parsed.data.publicUrl, hostingDomain: parsed.data.hostingDomain };
}

/** Folder and file layout under `BACKYARD_HOME` (design.md, "State"). */
export const homePaths = (home: string) => ({
  platformDb: path.join(home, 'platform.db'),
  apps: path.join(home, 'apps'),
  app: (appId: string) => path.join(home, 'apps', appId),
  git: path.join(home, 'git'),
  /** Written by a running server so that `backyard mcp` can find and forward to it. */
  serverFile: path.join(home, 'run', 'server.json'),
});

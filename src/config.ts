import { createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { cidrText } from './shared/cidr.js';
import { SETTINGS, type Setting, type SettingKey, type SettingValues } from './settings.js';

/**
 * Backyard's configuration: environment variables first, command-line flags over them, each setting
 * declared once in `SETTINGS` (src/settings.ts, which also makes the README's configuration table).
 * Every part of Backyard reads its settings from one `Config` built here; nothing else reads
 * `process.env` for settings.
 */
export type Config = Omit<SettingValues, 'githubAppId' | 'githubApiUrl' | 'githubPrivateKey' | 'githubPrivateKeyFile'> & {
  /** The GitHub App of the repository host, when configured (both its id and its private key). */
  github: GitHubAppConfig | undefined;
};

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
  role?: string;
  host?: string;
  port?: string | number;
  publicUrl?: string;
}

/** Thrown for a configuration value that does not validate; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** The raw value of one setting: its flag, else its variable (split when a list), else its default. */
function rawValue(s: Setting, override: unknown, env: NodeJS.ProcessEnv): unknown {
  if (override !== undefined) return override;
  const text = nonEmpty(env[s.variable]);
  if (text !== undefined) {
    return s.list
      ? text
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean)
      : text;
  }
  return typeof s.default === 'function' ? (s.default as () => unknown)() : s.default;
}

/**
 * Builds the configuration from `env` (normally `process.env`) and command-line overrides.
 * @throws ConfigError naming the variable (and its flag) and what is wrong with it.
 */
export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const values: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as Array<[SettingKey, Setting]>) {
    const parsed = s.schema.safeParse(rawValue(s, (overrides as Record<string, unknown>)[key], env));
    if (!parsed.success) {
      const where = s.flag ? `${s.variable} (${s.flag})` : s.variable;
      throw new ConfigError(`Invalid configuration: ${where} ${parsed.error.issues[0]!.message}.`);
    }
    values[key] = parsed.data;
  }
  const { githubAppId, githubApiUrl, githubPrivateKey, githubPrivateKeyFile, ...settings } = values as SettingValues;
  // A node of one role shares everything else with the others through PostgreSQL; on SQLite files there is nothing to share.
  if (settings.role !== 'all' && settings.databaseUrl === undefined) {
    throw new ConfigError(
      `Invalid configuration: BACKYARD_ROLE (--role) ${settings.role} needs BACKYARD_DATABASE_URL: the ${settings.role === 'data' ? 'platform and the other data nodes' : 'data nodes'} share the apps and the platform's state with this one through PostgreSQL. Without it, serve every role in one process (--role all).`,
    );
  }
  const { networkPool, networkSubnetPrefix } = settings;
  if (networkSubnetPrefix < networkPool.prefix) {
    // A subnet larger than the pool it is cut from: no account would get one.
    throw new ConfigError(
      `Invalid configuration: BACKYARD_NETWORK_SUBNET_PREFIX ${networkSubnetPrefix} makes subnets larger than BACKYARD_NETWORK_POOL ${cidrText(networkPool)}: ` +
        `set it to ${networkPool.prefix} or more, or set BACKYARD_NETWORK_POOL to a larger range.`,
    );
  }
  return { ...settings, github: githubAppConfig(githubAppId, githubApiUrl, githubPrivateKey, githubPrivateKeyFile) };
}

/**
 * The GitHub App settings: none when neither the app id nor a key is set; a ConfigError when only
 * one half is, or when the key is not a readable RSA private key.
 */
function githubAppConfig(appId: string | undefined, apiUrl: string, inline: string | undefined, file: string | undefined): GitHubAppConfig | undefined {
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

/** Folder and file layout under `BACKYARD_HOME` (docs/design.md, "State"). */
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

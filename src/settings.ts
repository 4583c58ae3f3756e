import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseIpv4Cidr } from './shared/cidr.js';
import { LOGIN_PATTERN } from './shared/login.js';

/**
 * `BACKYARD_DEVENV_NETWORK`'s default: each account's containers (development environments and Web
 * Apps) on a Docker network of their own.
 */
export const PER_ACCOUNT = 'per-account';

/**
 * `BACKYARD_NETWORK_POOL`'s and `BACKYARD_NETWORK_SUBNET_PREFIX`'s defaults: 2048 subnets of 32
 * addresses (29 containers beside the gateway) in 10.201.0.0/16. A private range (RFC 1918) far from
 * what the engine (172.17.0.0/12, 192.168.0.0/16 in its default pools), home routers (192.168.x) and
 * clouds' usual VPCs (10.0.x–10.1.x) take. /27 as the size: an account's containers are its development
 * environments and one per Web App (two while a deployment switches over), rarely near 29; a /28 (13)
 * would be tight for an account with many environments, a /26 (61) would leave room for only 1024
 * accounts, near the 1,000 this pool must hold.
 */
export const DEFAULT_NETWORK_POOL = '10.201.0.0/16';
export const DEFAULT_SUBNET_PREFIX = 27;

/**
 * One setting of Backyard, declared once: the loader (config.ts), the
 * `Config` type, the error texts and the README's configuration table all come from this.
 */
export interface Setting<S extends z.ZodType = z.ZodType> {
  /** The environment variable. */
  variable: string;
  /** The command-line flag that overrides the variable, if any. */
  flag?: string;
  /** The value when neither is given (before validation); a function when it is computed. */
  default?: unknown;
  /** The default as the README says it. */
  defaultText: string;
  /** The variable holds comma-separated values. */
  list?: boolean;
  /** Validation and conversion; its messages complete "<VARIABLE> …" (e.g. "must be a number"). */
  schema: S;
  /** What it sets, for the README (Markdown). */
  meaning: string;
}

const setting = <S extends z.ZodType>(s: Setting<S>): Setting<S> => s;

const whole = (min: number, max: number) =>
  z.coerce.number({ message: 'must be a number' }).int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
const fraction = (min: number, max: number) =>
  z.coerce.number({ message: 'must be a number' }).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
const httpUrl = (message: string) => z.url({ protocol: /^https?$/, message }).transform((u) => u.replace(/\/+$/, ''));

/** Every setting, in the README's order. */
export const SETTINGS = {
  home: setting({
    variable: 'BACKYARD_HOME',
    flag: '--home',
    default: () => path.join(os.homedir(), '.backyard'),
    defaultText: '`~/.backyard`',
    schema: z.string().min(1, 'must not be empty').transform((p) => path.resolve(p)),
    meaning: 'state folder: `platform.db` (unless `BACKYARD_DATABASE_URL`), `apps/<appId>/`, `git/`',
  }),
  databaseUrl: setting({
    variable: 'BACKYARD_DATABASE_URL',
    defaultText: 'none: SQLite files under the home',
    schema: z
      .url({ protocol: /^postgres(ql)?$/, message: 'must be a postgres:// URL, such as postgres://backyard@db.example:5432/backyard' })
      .optional(),
    meaning:
      "PostgreSQL for every Backend App's data (a schema `app_<appId>` each) and the platform's own state (schema `backyard`, instead of `platform.db`)",
  }),
  role: setting({
    variable: 'BACKYARD_ROLE',
    flag: '--role',
    default: 'all',
    defaultText: '`all`',
    schema: z.enum(['all', 'data', 'platform'], { message: 'must be all, data or platform' }),
    meaning:
      "what `backyard serve` serves: `all`, everything; `data`, the data API (`/data`, `/graphql`, LiveQuery, files, Backend Apps' hosted sites) with cloud code and scheduled jobs, any number of them; `platform`, the management API, MCP, the dashboard, the git host, development environments and Web Apps. `data` and `platform` need `BACKYARD_DATABASE_URL`",
  }),
  host: setting({
    variable: 'BACKYARD_HOST',
    flag: '--host',
    default: '127.0.0.1',
    defaultText: '`127.0.0.1`',
    schema: z.string().min(1, 'must not be empty'),
    meaning: 'address to bind (loopback unless you say otherwise)',
  }),
  port: setting({
    variable: 'BACKYARD_PORT',
    flag: '--port',
    default: 4000,
    defaultText: '`4000`',
    schema: z.coerce.number({ message: 'must be a number' }).int('must be a whole number').min(0, 'must be between 0 and 65535').max(65535, 'must be between 0 and 65535'),
    meaning: 'TCP port (`0` picks a free one)',
  }),
  publicUrl: setting({
    variable: 'BACKYARD_PUBLIC_URL',
    defaultText: '`http://localhost:<port>`',
    schema: httpUrl('must be an http or https URL').optional(),
    meaning: 'the address people and clients use, when behind a proxy or another name',
  }),
  account: setting({
    variable: 'BACKYARD_ACCOUNT',
    default: 'local',
    defaultText: '`local`',
    schema: z.string().regex(LOGIN_PATTERN, 'must be a login of 1 to 39 letters, digits or single dashes'),
    meaning: 'the account `backyard mcp` acts as',
  }),
  logLevel: setting({
    variable: 'BACKYARD_LOG_LEVEL',
    default: 'info',
    defaultText: '`info`',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; logs go to stderr',
  }),
  logFormat: setting({
    variable: 'BACKYARD_LOG_FORMAT',
    default: 'auto',
    defaultText: '`auto`',
    schema: z.enum(['auto', 'json', 'pretty'], { message: 'must be auto, json or pretty' }),
    meaning:
      '`pretty`: one readable line per event (time, level, message, fields), colored on a terminal; `json`: one JSON object per line, for log collectors; `auto`: `pretty` when stderr is a terminal, else `json`',
  }),
  allowedOrigins: setting({
    variable: 'BACKYARD_ALLOWED_ORIGINS',
    list: true,
    default: [],
    defaultText: 'none',
    schema: z.array(z.url({ message: 'must be origins like https://example.com' })),
    meaning: 'comma-separated browser origins allowed to call `/mcp`',
  }),
  oauthLoopbackClients: setting({
    variable: 'BACKYARD_OAUTH_LOOPBACK_CLIENTS',
    default: '0',
    defaultText: '`0`',
    schema: z.enum(['0', '1'], { message: 'must be 0 or 1' }).transform((v) => v === '1'),
    meaning:
      '`1`: MCP clients may name a client metadata document on a loopback address (`http://127.0.0.1:<port>/…`, for clients on this machine and tests), fetched only while the public URL is itself loopback; `0`: such documents must be `https` on a public address',
  }),
  hostingDomain: setting({
    variable: 'BACKYARD_HOSTING_DOMAIN',
    defaultText: "the public URL's host (`localhost`)",
    schema: z
      .string()
      .toLowerCase()
      .regex(/^(?=.{1,200}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'must be a domain name such as apps.example.com')
      .optional(),
    meaning: 'hosted sites answer at `<sub>.<domain>` (a wildcard DNS name that points here)',
  }),
  functionTimeoutMs: setting({
    variable: 'BACKYARD_FUNCTION_TIMEOUT_MS',
    default: 30_000,
    defaultText: '`30000`',
    schema: whole(100, 3_600_000),
    meaning: 'how long a cloud function or trigger may run before its worker is restarted',
  }),
  jobTimeoutMs: setting({
    variable: 'BACKYARD_JOB_TIMEOUT_MS',
    default: 900_000,
    defaultText: '`900000`',
    schema: whole(100, 86_400_000),
    meaning: 'how long a cloud job may run',
  }),
  cloudMemoryMb: setting({
    variable: 'BACKYARD_CLOUD_MEMORY_MB',
    default: 256,
    defaultText: '`256`',
    schema: whole(32, 16_384),
    meaning: "heap cap of each app's cloud code worker",
  }),
  cloudIdleMs: setting({
    variable: 'BACKYARD_CLOUD_IDLE_MS',
    default: 300_000,
    defaultText: '`300000`',
    schema: whole(100, 86_400_000),
    meaning: 'a cloud code worker without calls this long is stopped; the next call starts one',
  }),
  cloudConfinement: setting({
    variable: 'BACKYARD_CLOUD_CONFINEMENT',
    default: 'auto',
    defaultText: '`auto`',
    schema: z.enum(['auto', 'sandbox', 'none'], { message: 'must be auto, sandbox or none' }),
    meaning:
      "`auto`: cloud code in a bubblewrap sandbox when one can be made here (install `bubblewrap`: `apt-get install bubblewrap`), else under Node's permission model alone only while the home has one account (with more, cloud code is refused with 141 saying so); `sandbox`: only in the sandbox (no cloud code runs without one); `none`: the permission model alone, for any number of accounts (choose it knowingly: unconfined cloud code can reach local ports, sockets and processes)",
  }),
  cloudNetwork: setting({
    variable: 'BACKYARD_CLOUD_NETWORK',
    default: 'public',
    defaultText: '`public`',
    schema: z.enum(['public', 'none'], { message: 'must be public or none' }),
    meaning: "`public`: sandboxed cloud code reaches public internet addresses through Backyard; `none`: only its own app's data API",
  }),
  cloudAllowHosts: setting({
    variable: 'BACKYARD_CLOUD_ALLOW_HOSTS',
    list: true,
    default: [],
    defaultText: 'none',
    schema: z.array(z.string().regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/i, 'must be host:port pairs such as 10.0.0.5:8080, separated by commas')),
    meaning: 'comma-separated `host:port` pairs that sandboxed cloud code, the sign-in provider addresses of an app\'s `auth` setting, its webhooks, push services and own SMTP server may reach although they are loopback or private (an internal service of yours)',
  }),
  smtpUrl: setting({
    variable: 'BACKYARD_SMTP_URL',
    defaultText: 'none: mails are kept in each app\'s outbox (dashboard)',
    schema: z.url({ protocol: /^smtps?$/, message: 'must be an smtp:// or smtps:// URL, such as smtps://user:password@smtp.example.com:465' }).optional(),
    meaning: "the SMTP server Backend Apps send their users' verification and password reset mails through, unless an app sets its own (`emailAdapter`)",
  }),
  mailFrom: setting({
    variable: 'BACKYARD_MAIL_FROM',
    default: 'Backyard <no-reply@localhost>',
    defaultText: '`Backyard <no-reply@localhost>`',
    schema: z.string().min(3, 'must be a mail address such as "My App <no-reply@example.com>"').regex(/@/, 'must be a mail address such as "My App <no-reply@example.com>"'),
    meaning: 'the From address of those mails, unless an app sets its own',
  }),
  dockerHost: setting({
    variable: 'DOCKER_HOST',
    defaultText: 'the local socket',
    schema: z
      .string()
      .regex(/^(unix|npipe|tcp|http|https|ssh):\/\/./, 'must be like unix:///var/run/docker.sock or tcp://host:2375')
      .optional(),
    meaning: 'the Docker engine of development environments (`unix:///…`, `tcp://host:2375`), as the docker CLI reads it',
  }),
  devenvImage: setting({
    variable: 'BACKYARD_DEVENV_IMAGE',
    default: 'alpine:3.20',
    defaultText: '`alpine:3.20`',
    schema: z.string().regex(/^[a-z0-9][a-z0-9._/:@-]{0,254}$/i, 'must be an image reference such as alpine:3.20'),
    meaning:
      'image of development environments, pulled on first use; where it cannot be pulled, Backyard uses `backyard/devenv:debootstrap` by itself, building it once',
  }),
  execWaitMs: setting({
    variable: 'BACKYARD_EXEC_WAIT_MS',
    default: 15_000,
    defaultText: '`15000`',
    schema: whole(0, 600_000),
    meaning: 'how long `executeCommand` waits for the command to exit before answering `running`',
  }),
  devenvMemoryMb: setting({
    variable: 'BACKYARD_DEVENV_MEMORY_MB',
    default: 1024,
    defaultText: '`1024`',
    schema: whole(16, 1_048_576),
    meaning: 'memory limit of each development environment (no extra swap)',
  }),
  devenvCpus: setting({
    variable: 'BACKYARD_DEVENV_CPUS',
    default: 1,
    defaultText: '`1`',
    schema: fraction(0.01, 1024),
    meaning: 'CPU limit of each development environment (fractions allowed)',
  }),
  devenvPids: setting({
    variable: 'BACKYARD_DEVENV_PIDS',
    default: 512,
    defaultText: '`512`',
    schema: whole(16, 1_000_000),
    meaning: 'process limit of each development environment',
  }),
  devenvNetwork: setting({
    variable: 'BACKYARD_DEVENV_NETWORK',
    default: PER_ACCOUNT,
    defaultText: `\`${PER_ACCOUNT}\``,
    schema: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, `must be ${PER_ACCOUNT} (each account's containers on a network of their own) or a Docker network name such as bridge or none`)
      .refine((n) => n === PER_ACCOUNT || !/^per[-_.]?account$/i.test(n), `must be written ${PER_ACCOUNT}, in lowercase with a dash, for a network per account`)
      .refine((n) => n !== 'host' && !n.startsWith('container:'), "must not share the host's network (host is refused)"),
    meaning: `Docker network of development environments. \`${PER_ACCOUNT}\`: each account's environments and Web Apps on a network of their own, out of reach of other accounts' containers. A network name (\`bridge\`, one you made) puts the environments of all accounts on that one network, where they reach each other; \`none\` cuts them off; \`host\` is refused. Web Apps stay on their account's network either way`,
  }),
  networkPool: setting({
    variable: 'BACKYARD_NETWORK_POOL',
    default: DEFAULT_NETWORK_POOL,
    defaultText: `\`${DEFAULT_NETWORK_POOL}\``,
    schema: z
      .string()
      .refine((s) => parseIpv4Cidr(s, false) !== undefined, 'must be an IPv4 range in CIDR notation, such as 10.201.0.0/16')
      .refine((s) => parseIpv4Cidr(s) !== undefined, 'must start at the first address of its range (such as 10.201.0.0/16, not 10.201.5.0/16)')
      .transform((s) => parseIpv4Cidr(s)!),
    meaning:
      "addresses of the accounts' own networks (`BACKYARD_DEVENV_NETWORK`): each account's network gets a subnet of this range that no network on the engine uses, instead of one from the engine's default address pools (which hold about 30 networks); choose a private range that your hosts' own networks do not use",
  }),
  networkSubnetPrefix: setting({
    variable: 'BACKYARD_NETWORK_SUBNET_PREFIX',
    default: DEFAULT_SUBNET_PREFIX,
    defaultText: `\`${DEFAULT_SUBNET_PREFIX}\``,
    schema: whole(16, 29),
    meaning:
      "prefix length of each account's subnet, at least the pool's: `27` gives each account 29 container addresses, and the default pool room for 2048 accounts; `26` gives 61 addresses and room for 1024",
  }),
  githubAppId: setting({
    variable: 'BACKYARD_GITHUB_APP_ID',
    defaultText: 'none',
    schema: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, "must be the GitHub App's App ID, such as 123456").optional(),
    meaning:
      'a GitHub App whose installations give repository access tokens for GitHub accounts linked with `backyard account link <login> --github <githubLogin>`; needs one of the next two',
  }),
  githubPrivateKey: setting({
    variable: 'BACKYARD_GITHUB_PRIVATE_KEY',
    defaultText: 'none',
    schema: z.string().optional(),
    meaning: "the app's private key (PEM text; `\\n` escapes allowed)",
  }),
  githubPrivateKeyFile: setting({
    variable: 'BACKYARD_GITHUB_PRIVATE_KEY_FILE',
    defaultText: 'none',
    schema: z.string().optional(),
    meaning: "path of the app's private key file, instead of the above",
  }),
  githubApiUrl: setting({
    variable: 'BACKYARD_GITHUB_API_URL',
    default: 'https://api.github.com',
    defaultText: '`https://api.github.com`',
    schema: httpUrl('must be an http or https URL such as https://api.github.com'),
    meaning: "GitHub's REST API; for GitHub Enterprise Server `https://<host>/api/v3`",
  }),
  webappMemoryMb: setting({
    variable: 'BACKYARD_WEBAPP_MEMORY_MB',
    default: 512,
    defaultText: '`512`',
    schema: whole(16, 1_048_576),
    meaning: 'memory limit of each Web App container (no extra swap)',
  }),
  webappCpus: setting({
    variable: 'BACKYARD_WEBAPP_CPUS',
    default: 1,
    defaultText: '`1`',
    schema: fraction(0.01, 1024),
    meaning: 'CPU limit of each Web App container (fractions allowed)',
  }),
  webappHealthTimeoutMs: setting({
    variable: 'BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS',
    default: 60_000,
    defaultText: '`60000`',
    schema: whole(500, 3_600_000),
    meaning: 'how long a new container has to answer its `healthCheckPath` with 2xx or 3xx before its deployment fails',
  }),
  webappBuildTimeoutMs: setting({
    variable: 'BACKYARD_WEBAPP_BUILD_TIMEOUT_MS',
    default: 900_000,
    defaultText: '`900000`',
    schema: whole(1000, 86_400_000),
    meaning: 'how long cloning and building one deployment may take',
  }),
  webappSwarm: setting({
    variable: 'BACKYARD_WEBAPP_SWARM',
    default: 'auto',
    defaultText: '`auto`',
    schema: z.enum(['auto', 'off'], { message: 'must be auto or off' }),
    meaning:
      '`auto`: Web Apps run as swarm services while the engine is a swarm manager, else as containers; `off`: always as containers, even on an engine in a swarm',
  }),
  webappPollMs: setting({
    variable: 'BACKYARD_WEBAPP_POLL_MS',
    default: 60_000,
    defaultText: '`60000`',
    schema: whole(1000, 86_400_000),
    meaning: 'how often the branch head of GitHub Web Apps with `autoDeploy` is checked (the built-in git host deploys at once on push)',
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;

/** Each setting's value after validation, by key. */
export type SettingValues = { [K in SettingKey]: z.output<(typeof SETTINGS)[K]['schema']> };

/** Markers around the generated configuration table in README.md. */
export const SETTINGS_START = '<!-- settings:start (generated by npm run docs from src/settings.ts; do not edit) -->';
export const SETTINGS_END = '<!-- settings:end -->';

/** The README's configuration table (Markdown), one row per setting. */
export function settingsTable(): string {
  const rows = Object.values(SETTINGS).map((s: Setting) => {
    const name = s.flag ? `\`${s.variable}\` (\`${s.flag}\`)` : `\`${s.variable}\``;
    return `| ${name} | ${s.defaultText} | ${s.meaning} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

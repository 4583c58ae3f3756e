import { z } from 'zod';
import { parseClassLevelPermissions } from './classPermissions.js';
import { compileExtensionPattern } from './extensionPattern.js';
import { RegexError, type LinearRegex } from './query/regex.js';
import { isClassName } from './types.js';
import { authSettings } from './users/providers/options.js';
import { pushSettings } from './push/options.js';

/**
 * The server options a Parse app is deployed with, settable per Backend App, under Parse Server 9's names (`lib/Options/Definitions.js`) and with its
 * defaults, except `allowClientClassCreation` (see below). The platform stores only the options an
 * owner set; everything else follows these defaults, so a later Backyard may change a default for
 * apps that never chose.
 */

/** Parse Server 9's default `fileUpload.fileExtensions`: every extension but active content (HTML, SVG, XML and kin). */
export const DEFAULT_FILE_EXTENSIONS = [
  '^(?!([xXsS]?[hH][tT][mM][lL]?(\\+[xX][mM][lL])?|[xX][hH][tT]|[sS][vV][gG]([zZ]|\\+[xX][mM][lL])?|[xX][mM][lL]|[xX][sS][lL][tT]?(\\+[xX][mM][lL])?|[xX][sS][dD]|[rR][nN][gG]|[rR][dD][fF](\\+[xX][mM][lL])?|[oO][wW][lL]|[mM][aA][tT][hH][mM][lL](\\+[xX][mM][lL])?)$)',
];

const flag = (fallback: boolean) => z.boolean({ error: 'must be true or false' }).default(fallback);
const count = z.number({ error: 'must be a whole number of at least 1' }).int({ error: 'must be a whole number of at least 1' }).min(1, { error: 'must be a whole number of at least 1' });

/** The largest `maxUploadSize`: 10 GiB. */
export const MAX_UPLOAD_SIZE_LIMIT = 10 * 1024 ** 3;

/** A size as Parse Server's `maxUploadSize` takes it (Utils.parseSizeToBytes): `20mb`, `1.5gb`, `512kb`, `1000b`. */
const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/;
const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/**
 * The bytes of a size in Parse Server's form (a string with `b`, `kb`, `mb` or `gb`, or a number
 * of bytes), rounded down; NaN for anything else.
 */
export function sizeInBytes(size: string | number): number {
  if (typeof size === 'number') return Number.isFinite(size) && size >= 0 ? Math.floor(size) : NaN;
  const match = SIZE.exec(size.trim().toLowerCase());
  return match ? Math.floor(Number(match[1]) * SIZE_UNITS[match[2] ?? 'b']!) : NaN;
}

const uploadSizeError = `must be a size such as "20mb", "512kb" or "2gb" (or a number of bytes), from 1 byte to 10gb`;
const uploadSize = z
  .union([z.string(), z.number()], { error: uploadSizeError })
  .refine((size) => sizeInBytes(size) >= 1 && sizeInBytes(size) <= MAX_UPLOAD_SIZE_LIMIT, { error: uploadSizeError });

/**
 * A `fileExtensions` entry: `*` (any) or a regular expression an extension must match, as Parse
 * Server reads it, in the linear-time dialect of `$regex` (extensionPattern.ts).
 */
const extensionPattern = z
  .string({ error: 'must be a list of regular expressions (strings), or ["*"]' })
  .min(1, { error: 'must not hold an empty pattern' })
  .max(1000, { error: 'must hold patterns of at most 1000 characters' })
  .superRefine((pattern, ctx) => {
    if (pattern === '*') return;
    try {
      compileExtensionPattern(pattern);
    } catch (error) {
      if (!(error instanceof RegexError)) throw error;
      ctx.addIssue({ code: 'custom', message: `holds ${JSON.stringify(pattern)}, which is not a valid regular expression here: ${error.reason}` });
    }
  });

/**
 * `protectedFields`: `{<className>: {<principal>: [<field>, ...]}}`, each class's entry checked as a
 * class's CLP `protectedFields` is (classPermissions.ts), so the same principals are accepted.
 */
const protectedFields = z
  .record(z.string(), z.unknown(), { error: 'must be an object such as {"_User": {"*": ["email"]}}' })
  .superRefine((classes, ctx) => {
    for (const [name, entry] of Object.entries(classes)) {
      if (!isClassName(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is not a class name (letters, digits and _, starting with a letter, or a system class such as _User)' });
        continue;
      }
      try {
        parseClassLevelPermissions({ protectedFields: entry });
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: [name], message: `is invalid: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
  })
  .transform((classes) => classes as Record<string, Record<string, string[]>>);

/**
 * The options and their defaults. `allowClientClassCreation` defaults to true where Parse Server 9
 * defaults to false: Backend Apps are built by assistants whose front ends create their classes by
 * saving the first object (the guides rely on it); an owner turns it off once the schema is settled.
 */
export const serverSettingsSchema = z
  .object({
    allowClientClassCreation: flag(true),
    defaultLimit: count.default(100),
    maxLimit: count.nullable().default(null),
    sessionLength: z
      .number({ error: 'must be a number of seconds above 0' })
      .positive({ error: 'must be a number of seconds above 0' })
      .max(100 * 365 * 24 * 3600, { error: 'must be at most 100 years in seconds' })
      .default(31_536_000),
    expireInactiveSessions: flag(true),
    revokeSessionOnPasswordReset: flag(true),
    enforcePrivateUsers: flag(true),
    preventLoginWithUnverifiedEmail: flag(false),
    enableAnonymousUsers: flag(true),
    verifyUserEmails: flag(false),
    emailVerifyTokenValidityDuration: z
      .number({ error: 'must be a number of seconds above 0, or null for links that last until used' })
      .positive({ error: 'must be a number of seconds above 0, or null for links that last until used' })
      .nullable()
      .default(null),
    emailAdapter: z
      .strictObject(
        {
          smtpUrl: z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL, such as smtps://user:password@smtp.example.com:465' }).optional(),
          fromAddress: z.string({ error: 'must be a mail address such as "My App <no-reply@example.com>"' }).regex(/@/, { error: 'must be a mail address such as "My App <no-reply@example.com>"' }).optional(),
        },
        { error: 'must be an object such as {"smtpUrl": "smtps://user:password@smtp.example.com:465", "fromAddress": "My App <no-reply@example.com>"}' },
      )
      .nullable()
      .default(null),
    auth: authSettings.default({}),
    push: pushSettings,
    fileUpload: z
      .object(
        {
          enableForPublic: flag(false),
          enableForAnonymousUser: flag(false),
          enableForAuthenticatedUser: flag(true),
          fileExtensions: z.array(extensionPattern, { error: 'must be a list of regular expressions (strings), or ["*"]' }).default(DEFAULT_FILE_EXTENSIONS),
        },
        { error: 'must be an object of enableForPublic, enableForAnonymousUser, enableForAuthenticatedUser and fileExtensions' },
      )
      .strict()
      .prefault({}),
    maxUploadSize: uploadSize.default('20mb'),
    protectedFields: protectedFields.default({ _User: { '*': ['email'] } }),
    liveQuery: z
      .object(
        {
          classNames: z
            .array(
              z.string({ error: 'must be a list of class names' }).refine(isClassName, {
                error: 'must hold class names (letters, digits and _, starting with a letter, or a system class such as _User)',
              }),
              { error: 'must be a list of class names, such as ["Message"]' },
            )
            .max(1000, { error: 'must hold at most 1000 class names' })
            .default([]),
        },
        { error: 'must be an object such as {"classNames": ["Message"]}' },
      )
      .strict()
      .prefault({}),
  })
  .strict();

export type ServerSettings = z.output<typeof serverSettingsSchema>;

/** Every option at its default (Parse Server 9's, but for `allowClientClassCreation`). */
export const DEFAULT_SETTINGS: ServerSettings = Object.freeze(serverSettingsSchema.parse({}));

/** The names an option is set by: nested options with Parse's dotted names (`fileUpload.enableForPublic`). */
export const SETTING_KEYS = [
  'allowClientClassCreation',
  'defaultLimit',
  'maxLimit',
  'sessionLength',
  'expireInactiveSessions',
  'revokeSessionOnPasswordReset',
  'enforcePrivateUsers',
  'preventLoginWithUnverifiedEmail',
  'enableAnonymousUsers',
  'auth',
  'push',
  'verifyUserEmails',
  'emailVerifyTokenValidityDuration',
  'emailAdapter',
  'fileUpload.enableForPublic',
  'fileUpload.enableForAnonymousUser',
  'fileUpload.enableForAuthenticatedUser',
  'fileUpload.fileExtensions',
  'maxUploadSize',
  'protectedFields',
  'liveQuery.classNames',
] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

/** What each option does, for the command line's and the dashboard's texts. */
export const SETTING_HELP: Record<SettingKey, string> = {
  allowClientClassCreation: 'Clients (without the master key) may create a class by saving its first object; when false they get 119 for a class that does not exist.',
  defaultLimit: 'Results of a query that sets no limit.',
  maxLimit: 'The most results one query answers, whatever limit it asks for; null for no cap.',
  sessionLength: 'Seconds a new session lasts (its expiresAt).',
  expireInactiveSessions: 'When false, new sessions get no expiresAt and never expire.',
  revokeSessionOnPasswordReset: "A password change ends every session of the user (a client that changed its own gets a new one).",
  enforcePrivateUsers: 'New users get no public read in their ACL (only the user itself reads and writes).',
  preventLoginWithUnverifiedEmail: 'With verifyUserEmails on: signups get no session, and login and verifyPassword refuse (205) a user whose emailVerified is not true (also one without an email).',
  enableAnonymousUsers: 'Clients may sign up and log in as anonymous users (authData.anonymous); when false they get 252.',
  auth: 'Sign-in providers, e.g. {"google": {"clientId": "..."}, "apple": {"clientId": "..."}, "github": {"clientId": "...", "clientSecret": "..."}, "facebook": {"appIds": ["..."]}, "microsoft": {...}}; any other name with {"oidc": true, "issuer": "https://...", "clientId": "..."} is an OpenID Connect provider.',
  push: 'How pushes are delivered, as Parse Server\'s push adapter: {"ios": {"token": {"key": "<.p8>", "keyId": "...", "teamId": "..."}, "topic": "<bundle id>", "production": false}, "android": {"firebaseServiceAccount": {<service account JSON>}}, "web": {"vapidDetails": {"subject": "mailto:...", "publicKey": "...", "privateKey": "..."}}}; null: no push.',
  verifyUserEmails: 'A user who signs up or changes their email gets a mail with a link that sets emailVerified (through the app\'s emailAdapter, the server\'s SMTP server, or kept in the outbox).',
  emailVerifyTokenValidityDuration: 'Seconds a verification link works; null: until used.',
  emailAdapter: 'The app\'s own SMTP server for its users\' mails, e.g. {"smtpUrl": "smtps://user:password@smtp.example.com:465", "fromAddress": "My App <no-reply@example.com>"}; null: the server\'s (BACKYARD_SMTP_URL).',
  'fileUpload.enableForPublic': 'Callers without a session may upload files.',
  'fileUpload.enableForAnonymousUser': 'Anonymous users may upload files.',
  'fileUpload.enableForAuthenticatedUser': 'Logged-in users may upload files.',
  'fileUpload.fileExtensions': 'Regular expressions a file extension must match for clients to upload it; ["*"] for any. HTML, SVG, XML and kin stay refused.',
  maxUploadSize:
    'The largest file a client or the master key may upload, e.g. "50mb" or "2gb" (at most 10gb); the JS SDK\'s base64 uploads stay within the data API\'s 20 MiB body limit whatever this says.',
  protectedFields: 'Fields hidden per class and principal, added to each class\'s own protectedFields, e.g. {"_User": {"*": ["email"]}}. _User\'s email stays protected.',
  'liveQuery.classNames': 'Classes whose changes LiveQuery subscribers receive (ws://<host>/data), e.g. ["Message"]; none by default, as Parse Server.',
};

/** The options an owner set, in Parse's nested shape (`{"fileUpload": {"enableForPublic": true}}`). */
export type SettingOverrides = Record<string, unknown>;

/** A refused option: `key` names it (dotted), `message` says what was wrong. */
export class SettingsError extends Error {
  override name = 'SettingsError';
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const valueAt = (root: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>((node, key) => (isObject(node) || Array.isArray(node) ? (node as Record<PropertyKey, unknown>)[key] : undefined), root);

/**
 * The options in force given those an owner set.
 * @throws SettingsError naming the first bad option (its dotted path) and what it must be.
 */
export function resolveSettings(overrides: SettingOverrides): ServerSettings {
  const parsed = serverSettingsSchema.safeParse(overrides);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const key = [...issue.path, issue.keys[0]].join('.');
    throw new SettingsError(key, `There is no setting "${key}". The settings are ${SETTING_KEYS.join(', ')}.`);
  }
  const key = issue.path.map(String).join('.');
  const got = valueAt(overrides, issue.path);
  throw new SettingsError(key, `${key} ${issue.message}; got ${got === undefined ? 'nothing' : JSON.stringify(got)}.`);
}

/**
 * Applies changes to the options an owner set: each key is a dotted name of SETTING_KEYS, or
 * `fileUpload` with an object of its options (Parse's nested shape); null puts an option (or all of
 * `fileUpload`) back to its default.
 * @returns the new overrides and the options in force with them.
 * @throws SettingsError naming the key for an unknown name or a bad value; nothing is applied then.
 */
export function changeSettings(overrides: SettingOverrides, changes: Record<string, unknown>): { overrides: SettingOverrides; settings: ServerSettings } {
  const next: SettingOverrides = structuredClone(overrides);
  const set = (key: string, value: unknown) => {
    if (!(SETTING_KEYS as readonly string[]).includes(key)) {
      throw new SettingsError(key, `There is no setting "${key}". The settings are ${SETTING_KEYS.join(', ')}.`);
    }
    const [head, leaf] = key.split('.') as [string, string | undefined];
    if (leaf === undefined) {
      if (value === null) delete next[head];
      else next[head] = value;
      return;
    }
    const parent = isObject(next[head]) ? (next[head] as Record<string, unknown>) : {};
    if (value === null) delete parent[leaf];
    else parent[leaf] = value;
    if (Object.keys(parent).length) next[head] = parent;
    else delete next[head];
  };
  for (const [key, value] of Object.entries(changes)) {
    if (key !== 'fileUpload' && key !== 'liveQuery') set(key, value);
    else if (value === null) delete next[key];
    else if (isObject(value)) for (const [leaf, v] of Object.entries(value)) set(`${key}.${leaf}`, v);
    else throw new SettingsError(key, `${key} must be an object such as ${key === 'fileUpload' ? '{"enableForPublic": true}' : '{"classNames": ["Message"]}'}; got ${JSON.stringify(value)}.`);
  }
  return { overrides: next, settings: resolveSettings(next) };
}

/** An option's value in force, by its dotted name. */
export const settingValue = (settings: ServerSettings, key: SettingKey): unknown => valueAt(settings, key.split('.'));

/** The app's `maxUploadSize` in bytes. */
export const maxUploadBytes = (settings: ServerSettings): number => sizeInBytes(settings.maxUploadSize);

/**
 * The `expiresAt` of a session made now (Parse Server's `generateSessionExpiresAt`): `sessionLength`
 * seconds ahead, or none when `expireInactiveSessions` is off.
 */
export function sessionExpiry(settings: ServerSettings, now = Date.now()): { expiresAt?: { __type: 'Date'; iso: string } } {
  if (!settings.expireInactiveSessions) return {};
  return { expiresAt: { __type: 'Date', iso: new Date(now + settings.sessionLength * 1000).toISOString() } };
}

// authData holds login secrets (an anonymous id logs its user in): never another's to read or query.
const USER_DEFAULT_PROTECTED = ['email', 'authData'];

/**
 * The `protectedFields` a class is read with: its own CLP entry joined, principal by principal, with
 * the server option's entry for the class (Parse Server's SchemaData merge). `_User` always keeps
 * `email` under `*`, as Parse Server merges its default into any configured value.
 */
export function protectedFieldsFor(
  settings: ServerSettings,
  className: string,
  own: Readonly<Record<string, readonly string[]>> | undefined,
): Readonly<Record<string, readonly string[]>> | undefined {
  const server = settings.protectedFields[className];
  if (!server && className !== '_User') return own;
  const merged: Record<string, readonly string[]> = { ...own };
  const add = (principal: string, fields: readonly string[]) => {
    merged[principal] = [...new Set([...(merged[principal] ?? []), ...fields])];
  };
  for (const [principal, fields] of Object.entries(server ?? {})) add(principal, fields);
  if (className === '_User') add('*', USER_DEFAULT_PROTECTED);
  return merged;
}

const patternCache = new WeakMap<readonly string[], LinearRegex[] | 'any'>();

/**
 * Whether `fileUpload.fileExtensions` lets a client upload a file with this extension (or content
 * subtype), as Parse Server tests each pattern; in linear time (extensionPattern.ts).
 */
export function extensionAllowed(settings: ServerSettings, extension: string): boolean {
  const list = settings.fileUpload.fileExtensions;
  let patterns = patternCache.get(list);
  if (!patterns) {
    patterns = list.includes('*') ? 'any' : list.map(compileExtensionPattern);
    patternCache.set(list, patterns);
  }
  return patterns === 'any' || patterns.some((p) => p.test(extension));
}

import { createHash } from 'node:crypto';
import { ParseCode, ParseError } from '../errors.js';

/**
 * What the database keeps unique among an app's users, as Parse Server's
 * `DatabaseController.performInitialization` does with unique indexes (`_User.username`,
 * `_User.email`, their case-insensitive twins) and `RestWrite._throwIfAuthDataDuplicate` with the
 * provider ids: a username, an email (both compared with their ASCII letters lowered, as the
 * users service's check and the query compiler's `lowerEquals` compare them) and each provider's
 * `authData.<provider>.id`. The users service checks these before it writes (users/service.ts), but
 * only the database decides a race: two sign-ups of one name in two processes, or at an app's first
 * users, when no `_User` table exists yet for the check to read. Each dialect creates the indexes
 * (sqlite/uniqueUsers.ts, postgres/uniqueUsers.ts); this file names them and turns a violation of
 * one into Parse's answer.
 *
 * Apps whose `_User` already holds duplicates (made before these indexes existed) keep working: the
 * index of a field with duplicates is not created, a warning names the app's table and the field,
 * and the service's check goes on refusing new duplicates outside races. Once the duplicates are
 * resolved, the next open (or, for a provider, the next write of its `authData`) creates the index.
 */

/** The unique index of the username, lowered. */
export const USERNAME_INDEX = 'cls__User_username_unique';
/** The unique index of the email, lowered. */
export const EMAIL_INDEX = 'cls__User_email_unique';
/** Every provider's unique index starts so (authDataIndex). */
const AUTH_DATA_PREFIX = 'cls__User_authData_';

/** A provider name as the `auth` setting takes it (users/providers/options.ts), `anonymous` included. */
const PROVIDER = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** PostgreSQL keeps 63 bytes of an identifier; names are kept under it so that no two providers share one. */
const MAX_NAME = 63;

/**
 * The provider names of a `_User` row's `authData` (its keys whose value holds an `id`), checked.
 * @throws ParseError 252 for a name that is not a provider name (readAuthData refuses those first;
 *   this keeps any that slipped through out of SQL text).
 */
export function authDataProviders(authData: unknown): string[] {
  if (typeof authData !== 'object' || authData === null || Array.isArray(authData)) return [];
  const providers: string[] = [];
  for (const [provider, data] of Object.entries(authData)) {
    if (typeof data !== 'object' || data === null || !('id' in data)) continue;
    if (!PROVIDER.test(provider)) throw new ParseError(ParseCode.UNSUPPORTED_SERVICE, 'This authentication method is unsupported.');
    providers.push(provider);
  }
  return providers;
}

/**
 * The unique index of a provider's ids: `cls__User_authData_<provider>_unique`, or, for a name too
 * long for PostgreSQL, its first 20 characters and a hash of the whole. `provider` must have passed
 * `authDataProviders`.
 */
export function authDataIndex(provider: string): string {
  const name = `${AUTH_DATA_PREFIX}${provider}_unique`;
  if (name.length <= MAX_NAME) return name;
  return `${AUTH_DATA_PREFIX}${provider.slice(0, 20)}_${createHash('sha256').update(provider).digest('hex').slice(0, 16)}_unique`;
}

/**
 * Parse's answer to a write that one of these indexes refused (Parse Server's texts, RestWrite.js):
 * 202 "Account already exists for this username.", 203 "Account already exists for this email
 * address.", 208 "this auth is already used"; undefined for any other index.
 * @param indexName the index the database names in its refusal.
 */
export function uniqueViolation(indexName: string | undefined): ParseError | undefined {
  if (indexName === USERNAME_INDEX) return new ParseError(ParseCode.USERNAME_TAKEN, 'Account already exists for this username.');
  if (indexName === EMAIL_INDEX) return new ParseError(ParseCode.EMAIL_TAKEN, 'Account already exists for this email address.');
  if (indexName?.startsWith(AUTH_DATA_PREFIX)) return new ParseError(ParseCode.ACCOUNT_ALREADY_LINKED, 'this auth is already used');
  return undefined;
}

/** Says, once per field and app, that a unique index was not made because the table holds duplicates. */
export function warnDuplicates(table: string, field: string): void {
  process.emitWarning(
    `${table} holds users sharing one ${field}: its unique index is not created, so only the users service's check keeps new ones apart (not a race). Resolve the duplicates; the index is made at the next open.`,
    { code: 'BACKYARD_DUPLICATE_USERS' },
  );
}

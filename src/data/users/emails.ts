import { randomBytes } from 'node:crypto';
import { sameBytes } from '../../shared/sameBytes.js';
import type { AppKeys } from '../appKeys.js';
import type { Mailer } from '../mail/mailer.js';
import type { DataStore } from '../store.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import { isPlainObject } from '../values.js';

/**
 * Email verification and password reset (Parse Server 9's UserController and
 * UsersRouter): the tokens kept in a user's internal fields (`_email_verify_token`,
 * `_email_verify_token_expires_at`, `_perishable_token`), the mails with their links (Parse Server's
 * default texts), and what opening a link does. The pages themselves are rest/routes/pages.ts.
 *
 * A token is `<objectId>.<32 random bytes, base64url>`: the user is found by its objectId and the
 * token compared in constant time, so an internal field is never a query's key.
 */

/** Where an app's mails and links come from. */
export interface MailContext {
  /** Where mails go out and are kept (DataApps has both). */
  apps: { mailer: Mailer; mailFolder(applicationId: string): string };
  keys: AppKeys;
  /** The data API's public root, e.g. `http://localhost:4000/data`. */
  mountUrl: string;
}

/** A new token for the user `objectId`. */
export const newUserToken = (objectId: string): string => `${objectId}.${randomBytes(32).toString('base64url')}`;

/** Whether `given` is the token `stored` (constant time). */
const sameToken = (given: string, stored: unknown): boolean => typeof stored === 'string' && sameBytes(given, stored);

/** The user a token names, when the token is theirs (`field` holds it). */
async function userOfToken(store: DataStore, token: unknown, field: '_email_verify_token' | '_perishable_token'): Promise<StoredRow | undefined> {
  if (typeof token !== 'string') return undefined;
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  const user = await store.row('_User', token.slice(0, dot));
  return user && sameToken(token, user.data[field]) ? user : undefined;
}

const appNameOf = (ctx: MailContext) => ctx.keys.appName ?? ctx.keys.applicationId;
const pagesUrl = (ctx: MailContext) => `${ctx.mountUrl}/apps/${encodeURIComponent(ctx.keys.applicationId)}`;

/**
 * The verification fields of a user whose email is to be verified (`verifyUserEmails`): a fresh
 * token, and its expiry when `emailVerifyTokenValidityDuration` is set.
 */
export function verificationToken(store: DataStore, objectId: string): Record<string, unknown> {
  const seconds = store.settings().emailVerifyTokenValidityDuration;
  return {
    _email_verify_token: newUserToken(objectId),
    ...(seconds ? { _email_verify_token_expires_at: new Date(Date.now() + seconds * 1000).toISOString() } : {}),
  };
}

/** Sends the verification mail of `user` (it holds a token). Resolves once it is sent or kept (the outbox records a failure); never rejects. */
export async function sendVerificationMail(ctx: MailContext, store: DataStore, user: StoredRow): Promise<void> {
  const email = user.data.email;
  const token = user.data._email_verify_token;
  if (typeof email !== 'string' || typeof token !== 'string') return;
  const link = `${pagesUrl(ctx)}/verify_email?token=${encodeURIComponent(token)}`;
  const appName = appNameOf(ctx);
  await ctx.apps.mailer.send(ctx.apps.mailFolder(ctx.keys.applicationId), store.settings().emailAdapter, {
    to: email,
    subject: `Please verify your e-mail for ${appName}`,
    text: `Hi,\n\nYou are being asked to confirm the e-mail address ${email} with ${appName}\n\nClick here to confirm it:\n${link}`,
  });
}

/**
 * The internal fields a user write removes (each given as undefined: DataEngine.update's `extra`), as
 * Parse Server's `RestWrite.deleteEmailResetTokenIfNeeded` does: a new password or email (any value,
 * or its deletion) ends the pending reset link, so a link mailed before (to an old address too) no
 * longer sets a password. A changed email also ends its verification link, which was mailed to the
 * old address; with `verifyUserEmails` the caller issues a new one (`verificationToken`).
 * @param passwordOrEmail the write sets the password or the email.
 * @param emailChanged the write changes the email (to another address or none).
 */
export function endedTokens(passwordOrEmail: boolean, emailChanged: boolean): Record<string, undefined> {
  return {
    ...(passwordOrEmail ? { _perishable_token: undefined, _perishable_token_expires_at: undefined } : {}),
    ...(emailChanged ? { _email_verify_token: undefined, _email_verify_token_expires_at: undefined } : {}),
  };
}

/** The `email` of a `/requestPasswordReset` or `/verificationEmailRequest` body. @throws ParseError 204, 125 (Parse Server's texts). */
function emailOf(body: unknown): string {
  const email = isPlainObject(body) ? body.email : undefined;
  if (email === undefined || email === null || email === '') throw new ParseError(ParseCode.EMAIL_MISSING, 'you must provide an email');
  if (typeof email !== 'string') throw new ParseError(ParseCode.INVALID_EMAIL_ADDRESS, 'you must provide a valid email string');
  return email;
}

/**
 * `POST /verificationEmailRequest` (Parse REST guide, "Emails"): a new verification mail for the
 * user of `email` whose email is not verified. Like Parse Server 9 (`emailVerifySuccessOnInvalidEmail`
 * on by default), an unknown or verified address is answered the same, so that nobody learns which
 * addresses have accounts.
 * @throws ParseError 204/125 (no or bad email).
 */
export async function requestVerificationEmail(ctx: MailContext, store: DataStore, body: unknown): Promise<void> {
  const email = emailOf(body);
  if (!store.settings().verifyUserEmails) return;
  const [found] = await store.rows('_User', { where: { email }, limit: 1 });
  if (!found || found.data.emailVerified === true) return;
  const user = await store.atomically(async (store) => {
    const current = await store.row('_User', found.objectId);
    if (!current) return undefined;
    const row: StoredRow = { ...current, data: { ...current.data, ...verificationToken(store, current.objectId) } };
    await store.replaceRow('_User', row);
    return row;
  });
  // Not awaited, as Parse Server does not await its adapter.
  if (user) void sendVerificationMail(ctx, store, user).catch(() => undefined);
}

/**
 * `POST /requestPasswordReset` (Parse REST guide, "Requesting A Password Reset"): a reset mail to
 * the user whose `email` it is (or whose username it is, having no email), with a link to a page
 * that sets a new password. Answered the same whether or not such a user exists (Parse Server 9's
 * `resetPasswordSuccessOnInvalidEmail` default). The link works until used or until the password
 * or the email changes otherwise (`endedTokens`).
 * @throws ParseError 204/125 (no or bad email).
 */
export async function requestPasswordReset(ctx: MailContext, store: DataStore, body: unknown): Promise<void> {
  const email = emailOf(body);
  const [found] = await store.rows('_User', { where: { $or: [{ email }, { username: email, email: { $exists: false } }] }, limit: 1 });
  if (!found) return;
  const user = await store.atomically(async (store) => {
    const current = await store.row('_User', found.objectId);
    if (!current) return undefined;
    const row: StoredRow = { ...current, data: { ...current.data, _perishable_token: newUserToken(current.objectId) } };
    await store.replaceRow('_User', row);
    return row;
  });
  if (!user) return;
  // Not awaited, as Parse Server does not await its adapter: the answer does not wait for an SMTP server.
  void sendResetMail(ctx, store, user, email).catch(() => undefined);
}

async function sendResetMail(ctx: MailContext, store: DataStore, user: StoredRow, email: string): Promise<void> {
  const link = `${pagesUrl(ctx)}/request_password_reset?token=${encodeURIComponent(user.data._perishable_token as string)}`;
  const appName = appNameOf(ctx);
  const username = typeof user.data.username === 'string' ? ` (your username is '${user.data.username}')` : '';
  await ctx.apps.mailer.send(ctx.apps.mailFolder(ctx.keys.applicationId), store.settings().emailAdapter, {
    to: typeof user.data.email === 'string' ? user.data.email : email,
    subject: `Password Reset for ${appName}`,
    text: `Hi,\n\nYou requested to reset your password for ${appName}${username}.\n\nClick here to reset it:\n${link}`,
  });
}

/**
 * Opens a verification link: the user of `token` gets `emailVerified: true` and the token is spent.
 * @returns the user's email, or undefined for a link that is unknown, spent or expired.
 */
export async function verifyEmail(store: DataStore, token: unknown): Promise<string | undefined> {
  return store.atomically(async (store) => {
    const user = await userOfToken(store, token, '_email_verify_token');
    if (!user) return undefined;
    const expires = user.data._email_verify_token_expires_at;
    if (typeof expires === 'string' && Date.parse(expires) < Date.now()) return undefined;
    const { _email_verify_token: _spent, _email_verify_token_expires_at: _expiry, ...data } = user.data;
    await store.replaceRow('_User', { ...user, updatedAt: new Date().toISOString(), data: { ...data, emailVerified: true } }, true);
    return typeof user.data.email === 'string' ? user.data.email : '';
  });
}

/** The user a password reset link is for, or undefined when it is unknown or spent. */
export const userOfResetToken = (store: DataStore, token: unknown): Promise<StoredRow | undefined> => userOfToken(store, token, '_perishable_token');

import type { Auth } from '../auth/context.js';
import { rolePrincipals } from '../auth/roles.js';
import { sessionUser } from '../auth/sessions.js';
import type { DataStore } from '../store.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';

/**
 * How long what is known of a session token is trusted, in milliseconds: Parse Server's LiveQuery
 * `cacheTimeout` (5 s, ParseLiveQueryServer.js), which bounds how late a subscriber hears of a
 * session ended where this process cannot see it (a logout through another process).
 */
export const SESSION_RECHECK_MS = 5000;
/** Tokens remembered at most (the oldest go first), so that connects with made-up tokens cost bounded memory. */
const MAX_TOKENS = 10_000;
/** Tokens looked up per `_Session` query of `endedSessions`. */
const TOKENS_PER_QUERY = 500;

/** What a valid token gives: its user, the ACL principals (`*`, the user's id, `role:<name>`), and when it expires (ms since 1970). */
interface SessionGrant {
  user: StoredRow;
  principals: string[];
  expiresAt: number;
}

interface Entry {
  /** When the token was read (Date.now()). */
  at: number;
  result: Promise<SessionGrant>;
  /** The result once known: the grant, or `ended` for a token that is no longer valid. */
  settled?: SessionGrant | 'ended';
}

/** Parse's answer for a token that is unknown, expired or ended (ParseLiveQueryServer.js answers it so too). */
export const invalidSession = () => new ParseError(ParseCode.INVALID_SESSION_TOKEN, 'Invalid session token');

/** When a `_Session` row expires, in ms since 1970 (Infinity without `expiresAt`). */
function expiryOf(session: StoredRow): number {
  const iso = (session.data.expiresAt as { iso?: string } | undefined)?.iso;
  const at = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(at) ? Number.POSITIVE_INFINITY : at;
}

/**
 * LiveQuery's memory of session tokens (Parse Server's LiveQuery `authCache`): a token is read from
 * `_Session` (and its user and roles) at most once per `maxAgeMs` per app, so that each event can
 * be checked against it without a query per subscriber, and a session is refused from the moment it
 * expires, or it is `end`ed, or it is read again and found gone.
 */
export class SessionChecks {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly maxAgeMs = SESSION_RECHECK_MS) {}

  /**
   * The auth of a client holding `token`: at once when the token was read within `maxAgeMs`, else
   * once it is read again. Concurrent callers share one read.
   * @returns rejects with ParseError 209 "Invalid session token" for an unknown, expired or ended
   *   token; with the storage's error when it cannot be read (that answer is not remembered).
   */
  auth(store: DataStore, token: string, installationId: string | undefined): Auth | Promise<Auth> {
    const key = keyOf(store.appId, token);
    const now = Date.now();
    let entry = this.entries.get(key);
    if (!entry || now - entry.at >= this.maxAgeMs) entry = this.read(store, token, key, now);
    const toAuth = (grant: SessionGrant): Auth => {
      if (grant.expiresAt <= Date.now()) throw invalidSession();
      return { master: false, user: grant.user, sessionToken: token, installationId, principals: grant.principals };
    };
    const { settled } = entry;
    if (settled === 'ended') return Promise.reject(invalidSession());
    if (settled && settled.expiresAt > now) return toAuth(settled);
    return entry.result.then(toAuth);
  }

  /** Remembers that `token`'s session ended (a logout, a deleted `_Session`): refused without reading it again. */
  end(appId: string, token: string): void {
    const key = keyOf(appId, token);
    const result = Promise.reject(invalidSession());
    result.catch(() => undefined);
    this.entries.delete(key);
    this.remember(key, { at: Date.now(), result, settled: 'ended' });
  }

  /**
   * Forgets the grants of every token of an app, so that each is read again at its next use (a
   * `_Role` changed: users' roles may have; Parse Server's LiveQuery clears its role cache then too).
   */
  forgetGrants(appId: string): void {
    const prefix = keyOf(appId, '');
    for (const [key, entry] of this.entries) if (key.startsWith(prefix) && entry.settled !== 'ended') this.entries.delete(key);
  }

  /** Reads a token now (sessionUser, then the user's roles), remembering the answer. */
  private read(store: DataStore, token: string, key: string, now: number): Entry {
    const entry: Entry = {
      at: now,
      result: sessionUser(store, token).then(async ({ session, user }) => ({
        user,
        principals: ['*', user.objectId, ...(await rolePrincipals(store, user.objectId))],
        expiresAt: expiryOf(session),
      })),
    };
    entry.result.then(
      (grant) => void (entry.settled = grant),
      (error: unknown) => {
        if (error instanceof ParseError && error.code === ParseCode.INVALID_SESSION_TOKEN) entry.settled = 'ended';
        // Storage trouble is not an answer about the token: the next caller reads it again.
        else if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    this.entries.delete(key);
    this.remember(key, entry);
    return entry;
  }

  private remember(key: string, entry: Entry): void {
    this.entries.set(key, entry);
    if (this.entries.size > MAX_TOKENS) this.entries.delete(this.entries.keys().next().value!);
  }
}

const keyOf = (appId: string, token: string) => `${appId}\u0000${token}`;

/**
 * Of `tokens`, those whose `_Session` is gone or expired, read with one query per 500 tokens
 * (the periodic check of every token LiveQuery holds, which finds sessions ended by another process).
 * @throws the storage's error when `_Session` cannot be read.
 */
export async function endedSessions(store: DataStore, tokens: readonly string[]): Promise<string[]> {
  const alive = new Set<string>();
  const now = Date.now();
  for (let i = 0; i < tokens.length; i += TOKENS_PER_QUERY) {
    const chunk = tokens.slice(i, i + TOKENS_PER_QUERY);
    const rows = await store.rows('_Session', { where: { sessionToken: { $in: chunk } }, limit: chunk.length });
    for (const row of rows) if (expiryOf(row) > now && typeof row.data.sessionToken === 'string') alive.add(row.data.sessionToken);
  }
  return tokens.filter((token) => !alive.has(token));
}

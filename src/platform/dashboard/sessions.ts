import { createHmac } from 'node:crypto';
import type { Account, AccountService } from '../accounts/service.js';
import { hashToken, sameHash } from '../accounts/tokens.js';
import { randomSecret } from '../../shared/ids.js';
import type { Platform } from '../platform.js';
import type { Db } from '../../shared/sqlite.js';

/*
 * The storage side of dashboard sign-in: sessions and one-time sign-in links. What travels over HTTP
 * (the cookie, the CSRF checks of requests) stays in the front end (src/server/dashboard/security.ts
 * and index.ts), which only hands this class the tokens it read.
 */

/** How long a dashboard session lasts after sign-in (the cookie's Max-Age too). */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a one-time sign-in link printed by `backyard dashboard` stays usable. */
export const SIGN_IN_LINK_TTL_MS = 15 * 60 * 1000;

/** A signed-in browser: whose it is, and the token that protects its changes against cross-site requests. */
export interface DashboardSession {
  account: Account;
  /** SHA-256 of the session token, as stored; identifies the session on the server. */
  hash: Buffer;
  /** Put in every form and change request (`_csrf` field or `X-CSRF-Token` header). */
  csrfToken: string;
  expiresAt: string;
}

/** The CSRF token of a session: an HMAC of a fixed label under the session token (known only to its browser and, per request, to us). */
export const csrfTokenOf = (sessionToken: string): string => createHmac('sha256', sessionToken).update('backyard dashboard csrf').digest('base64url');

/**
 * Dashboard sessions and one-time sign-in links in `platform.db` (migration 6). Like account tokens,
 * both are random 256-bit secrets of which only the SHA-256 is stored.
 */
export class DashboardSessions {
  constructor(
    private readonly db: Db,
    private readonly accounts: AccountService,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Starts a session for an account.
   * @returns the session token for the cookie (never stored in clear) and the session.
   */
  create(account: Account): { token: string; session: DashboardSession } {
    const token = randomSecret(32);
    const hash = hashToken(token);
    const now = this.now();
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM dashboard_sessions WHERE expires_at <= ?').run(new Date(now).toISOString());
      this.db
        .prepare('INSERT INTO dashboard_sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
        .run(hash, account.id, new Date(now).toISOString(), expiresAt);
    })();
    return { token, session: { account, hash, csrfToken: csrfTokenOf(token), expiresAt } };
  }

  /** The live session of a session token (the dashboard's cookie), or undefined when it is unknown, ended or expired. */
  find(token: string | undefined): DashboardSession | undefined {
    if (!token || token.length > 200) return undefined;
    const hash = hashToken(token);
    const row = this.db
      .prepare(
        `SELECT s.token_hash AS hash, s.expires_at, a.id, a.login, a.created_at
           FROM dashboard_sessions s JOIN accounts a ON a.id = s.account_id
          WHERE s.token_hash = ? AND s.expires_at > ?`,
      )
      .get(hash, new Date(this.now()).toISOString()) as
      | { hash: Buffer; expires_at: string; id: string; login: string; created_at: string }
      | undefined;
    if (!row || !sameHash(row.hash, hash)) return undefined;
    return {
      account: { id: row.id, login: row.login, createdAt: row.created_at },
      hash,
      csrfToken: csrfTokenOf(token),
      expiresAt: row.expires_at,
    };
  }

  /** Ends a session (sign-out). Unknown sessions are ignored. */
  end(hash: Buffer): void {
    this.db.prepare('DELETE FROM dashboard_sessions WHERE token_hash = ?').run(hash);
  }

  /**
   * Makes a one-time sign-in code for an account (`backyard dashboard`), usable once within
   * `SIGN_IN_LINK_TTL_MS`.
   */
  createLinkCode(accountId: string): string {
    const code = randomSecret(32);
    const now = this.now();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM dashboard_sign_in_links WHERE expires_at <= ?').run(new Date(now).toISOString());
      this.db
        .prepare('INSERT INTO dashboard_sign_in_links (code_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
        .run(hashToken(code), accountId, new Date(now).toISOString(), new Date(now + SIGN_IN_LINK_TTL_MS).toISOString());
    })();
    return code;
  }

  /** The account a sign-in code would sign in, without using it up; undefined when unknown, used or expired. */
  peekLinkCode(code: string | undefined): Account | undefined {
    if (!code || code.length > 200) return undefined;
    const row = this.db
      .prepare('SELECT account_id FROM dashboard_sign_in_links WHERE code_hash = ? AND expires_at > ?')
      .get(hashToken(code), new Date(this.now()).toISOString()) as { account_id: string } | undefined;
    return row && this.accountById(row.account_id);
  }

  /** Uses up a sign-in code: the account it signs in, or undefined when it is unknown, used or expired. */
  redeemLinkCode(code: string | undefined): Account | undefined {
    if (!code || code.length > 200) return undefined;
    const hash = hashToken(code);
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare('SELECT account_id FROM dashboard_sign_in_links WHERE code_hash = ? AND expires_at > ?')
          .get(hash, new Date(this.now()).toISOString()) as { account_id: string } | undefined;
        this.db.prepare('DELETE FROM dashboard_sign_in_links WHERE code_hash = ?').run(hash);
        return row && this.accountById(row.account_id);
      })
      .immediate();
  }

  /** The account a bearer token (`backyard account create`) belongs to. */
  authenticateToken(token: string): Account | undefined {
    return token.length > 200 ? undefined : this.accounts.authenticate(token.trim());
  }

  private accountById(id: string): Account | undefined {
    const row = this.db.prepare('SELECT id, login, created_at FROM accounts WHERE id = ?').get(id) as
      | { id: string; login: string; created_at: string }
      | undefined;
    return row && { id: row.id, login: row.login, createdAt: row.created_at };
  }
}

/** The dashboard sessions of a platform: over its `platform.db` and its accounts. */
export const dashboardSessionsOf = (platform: Pick<Platform, 'db' | 'services'>): DashboardSessions =>
  new DashboardSessions(platform.db, platform.services.accounts);

/**
 * A one-time link that signs `login` in to the dashboard served at `base` (`backyard dashboard`).
 * The account is created when it does not exist yet, as `backyard mcp` would.
 */
export function signInLink(db: Db, accounts: AccountService, login: string, base: string): string {
  const account = accounts.ensure(login);
  const code = new DashboardSessions(db, accounts).createLinkCode(account.id);
  // The dashboard's sign-in link route (src/server/dashboard/signin.ts), as `dashboardURL`s are built here too.
  return `${base.replace(/\/+$/, '')}/dashboard/sign-in/link?code=${encodeURIComponent(code)}`;
}

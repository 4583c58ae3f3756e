import { createHmac } from 'node:crypto';
import type { Account } from '../accounts/service.js';
import { hashToken, sameHash } from '../accounts/tokens.js';
import { randomSecret } from '../../shared/ids.js';
import type { AccountOperations, DashboardSessionOperations, Services } from '../services.js';
import type { Sql } from '../../shared/sql.js';

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
export class DashboardSessions implements DashboardSessionOperations {
  constructor(
    private readonly db: Sql,
    private readonly accounts: Pick<AccountOperations, 'authenticate'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Starts a session for an account.
   * @returns the session token for the cookie (never stored in clear) and the session.
   */
  async create(account: Account): Promise<{ token: string; session: DashboardSession }> {
    const token = randomSecret(32);
    const hash = hashToken(token);
    const now = this.now();
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString();
    await this.db.transaction(async () => {
      await this.db.run('DELETE FROM dashboard_sessions WHERE expires_at <= ?', new Date(now).toISOString());
      await this.db.run('INSERT INTO dashboard_sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)', hash, account.id, new Date(now).toISOString(), expiresAt);
    });
    return { token, session: { account, hash, csrfToken: csrfTokenOf(token), expiresAt } };
  }

  /** The live session of a session token (the dashboard's cookie), or undefined when it is unknown, ended or expired. */
  async find(token: string | undefined): Promise<DashboardSession | undefined> {
    if (!token || token.length > 200) return undefined;
    const hash = hashToken(token);
    const row = (await this.db.get(`SELECT s.token_hash AS hash, s.expires_at, a.id, a.login, a.created_at
           FROM dashboard_sessions s JOIN accounts a ON a.id = s.account_id
          WHERE s.token_hash = ? AND s.expires_at > ?`, hash, new Date(this.now()).toISOString())) as
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
  async end(hash: Buffer): Promise<void> {
    await this.db.run('DELETE FROM dashboard_sessions WHERE token_hash = ?', hash);
  }

  /**
   * Makes a one-time sign-in code for an account (`backyard dashboard`), usable once within
   * `SIGN_IN_LINK_TTL_MS`.
   */
  async createLinkCode(accountId: string): Promise<string> {
    const code = randomSecret(32);
    const now = this.now();
    await this.db.transaction(async () => {
      await this.db.run('DELETE FROM dashboard_sign_in_links WHERE expires_at <= ?', new Date(now).toISOString());
      await this.db.run('INSERT INTO dashboard_sign_in_links (code_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)', hashToken(code), accountId, new Date(now).toISOString(), new Date(now + SIGN_IN_LINK_TTL_MS).toISOString());
    });
    return code;
  }

  /** The account a sign-in code would sign in, without using it up; undefined when unknown, used or expired. */
  async peekLinkCode(code: string | undefined): Promise<Account | undefined> {
    if (!code || code.length > 200) return undefined;
    const row = (await this.db.get('SELECT account_id FROM dashboard_sign_in_links WHERE code_hash = ? AND expires_at > ?', hashToken(code), new Date(this.now()).toISOString())) as { account_id: string } | undefined;
    return row && (await this.accountById(row.account_id));
  }

  /** Uses up a sign-in code: the account it signs in, or undefined when it is unknown, used or expired. */
  async redeemLinkCode(code: string | undefined): Promise<Account | undefined> {
    if (!code || code.length > 200) return undefined;
    const hash = hashToken(code);
    return await this.db.transaction(async () => {
        const row = (await this.db.get('SELECT account_id FROM dashboard_sign_in_links WHERE code_hash = ? AND expires_at > ?', hash, new Date(this.now()).toISOString())) as { account_id: string } | undefined;
        await this.db.run('DELETE FROM dashboard_sign_in_links WHERE code_hash = ?', hash);
        return row && (await this.accountById(row.account_id));
      });
  }

  /** The account a bearer token (`backyard account create`) belongs to. */
  async authenticateToken(token: string): Promise<Account | undefined> {
    return token.length > 200 ? undefined : this.accounts.authenticate(token.trim());
  }

  private async accountById(id: string): Promise<Account | undefined> {
    const row = (await this.db.get('SELECT id, login, created_at FROM accounts WHERE id = ?', id)) as
      | { id: string; login: string; created_at: string }
      | undefined;
    return row && { id: row.id, login: row.login, createdAt: row.created_at };
  }
}

/**
 * A one-time link that signs `login` in to the dashboard served at `base` (`backyard dashboard`).
 * The account is created when it does not exist yet, as `backyard mcp` would.
 */
export async function signInLink(services: Pick<Services, 'accounts' | 'dashboardSessions'>, login: string, base: string): Promise<string> {
  const account = await services.accounts.ensure(login);
  const code = await services.dashboardSessions.createLinkCode(account.id);
  // The dashboard's sign-in link route (src/server/dashboard/signin.ts), as `dashboardURL`s are built here too.
  return `${base.replace(/\/+$/, '')}/dashboard/sign-in/link?code=${encodeURIComponent(code)}`;
}

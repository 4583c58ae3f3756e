import type { Sql } from '../../shared/sql.js';
import { nowIso } from '../../shared/sqlite.js';
import { newId } from '../../shared/ids.js';
import { invalid } from '../../errors.js';
import { hashToken, newToken, sameHash } from './tokens.js';

/** A Backyard account: every resource belongs to exactly one. */
export interface Account {
  id: string;
  login: string;
  createdAt: string;
}

import { LOGIN_PATTERN } from '../../shared/login.js';
import type { AccountOperations } from '../services.js';

export { LOGIN_PATTERN };

interface AccountRow {
  id: string;
  login: string;
  created_at: string;
}

const toAccount = (r: AccountRow): Account => ({ id: r.id, login: r.login, createdAt: r.created_at });

/**
 * What a token was made for beyond its account: only operations that change nothing, or
 * only one Backend App. Such a token works for the management API and MCP only, never to sign in to
 * the dashboard or push to the git host, where the limits could not hold.
 */
export interface TokenLimits {
  readOnly: boolean;
  appId: string | null;
}

/**
 * Accounts and their bearer tokens in `platform.db` (docs/design.md, decision 2).
 * Tokens are shown once at creation; only their SHA-256 is kept and compared in constant time.
 */
export class AccountService implements AccountOperations {
  constructor(private readonly db: Sql) {}

  /**
   * Creates an account and its first token.
   * @returns the account and the token in clear, which is never retrievable again.
   * @throws ManagementError(invalid) for a malformed or taken login.
   */
  async create(login: string): Promise<{ account: Account; token: string }> {
    if (!LOGIN_PATTERN.test(login)) {
      throw invalid(`The login "${login}" is not valid: use 1 to 39 letters, digits or single dashes, not starting or ending with a dash.`);
    }
    return this.db.transaction(async () => {
      if (await this.findByLogin(login)) throw invalid(`An account with the login "${login}" already exists.`);
      const account = await this.insert(login);
      const token = await this.issueToken(account.id, 'user');
      return { account, token };
    });
  }

  /** Finds or creates the account that stdio MCP acts as (`BACKYARD_ACCOUNT`). */
  async ensure(login: string): Promise<Account> {
    if (!LOGIN_PATTERN.test(login)) throw invalid(`The account login "${login}" is not valid: use 1 to 39 letters, digits or single dashes.`);
    return this.db.transaction(async () => (await this.findByLogin(login)) ?? (await this.insert(login)));
  }

  /**
   * Issues another token for an account. `forward` tokens are made by `backyard mcp` to reach a
   * Backyard already running on the same home, and revoked when it exits.
   */
  async issueToken(accountId: string, kind: 'user' | 'forward', limits: TokenLimits = { readOnly: false, appId: null }): Promise<string> {
    const token = newToken();
    await this.db.run(
      'INSERT INTO account_tokens (id, account_id, token_hash, kind, created_at, read_only, app_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
      newId(), accountId, hashToken(token), kind, nowIso(), limits.readOnly ? 1 : 0, limits.appId,
    );
    return token;
  }

  /** Deletes one token (by its clear text); unknown tokens are ignored. */
  async revokeToken(token: string): Promise<void> {
    await this.db.run('DELETE FROM account_tokens WHERE token_hash = ?', hashToken(token));
  }

  /**
   * The account a bearer token belongs to, or undefined for an unknown token and for a limited one
   * (TokenLimits): the dashboard and the git host call this, and a limited token is not for them.
   */
  async authenticate(token: string): Promise<Account | undefined> {
    const found = await this.authenticateWithLimits(token);
    return found && !found.limits.readOnly && found.limits.appId === null ? found.account : undefined;
  }

  /** The account a bearer token belongs to and what the token was limited to; undefined for an unknown token. */
  async authenticateWithLimits(token: string): Promise<{ account: Account; limits: TokenLimits } | undefined> {
    const hash = hashToken(token);
    const row = await this.db.get<AccountRow & { hash: Buffer; read_only: number; app_id: string | null }>(
      `SELECT a.id, a.login, a.created_at, t.token_hash AS hash, t.read_only, t.app_id
         FROM account_tokens t JOIN accounts a ON a.id = t.account_id
        WHERE t.token_hash = ?`,
      hash,
    );
    if (!row || !sameHash(row.hash, hash)) return undefined;
    return { account: toAccount(row), limits: { readOnly: row.read_only === 1, appId: row.app_id } };
  }

  /** How many accounts there are (the cloud runtime asks: unconfined cloud code runs only in a home of one). */
  async count(): Promise<number> {
    const row = await this.db.get<{ n: number | string }>('SELECT count(*) AS n FROM accounts');
    return Number(row?.n ?? 0);
  }

  /** The account whose login is `login`, compared without case. */
  async findByLogin(login: string): Promise<Account | undefined> {
    const row = await this.db.get<AccountRow>('SELECT id, login, created_at FROM accounts WHERE lower(login) = lower(?)', login);
    return row && toAccount(row);
  }

  private async insert(login: string): Promise<Account> {
    const account: Account = { id: newId(), login, createdAt: nowIso() };
    await this.db.run('INSERT INTO accounts (id, login, created_at) VALUES (?, ?, ?)', account.id, account.login, account.createdAt);
    return account;
  }

  /** Every account, by login. */
  async list(): Promise<Account[]> {
    return (await this.db.all<AccountRow>('SELECT id, login, created_at FROM accounts ORDER BY lower(login), login')).map(toAccount);
  }
}

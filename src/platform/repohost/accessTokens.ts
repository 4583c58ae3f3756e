import type { Account } from '../accounts/service.js';
import { hashToken, sameHash } from '../accounts/tokens.js';
import { newId, randomSecret } from '../../shared/ids.js';
import type { Sql } from '../../shared/sql.js';

/** Access tokens of the built-in git host: `byr_` and 256 random bits as base64url. */
export const ACCESS_TOKEN_PREFIX = 'byr_';

/** How long an access token works (one hour). */
export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;

/**
 * Short-lived tokens for the built-in git host (operation 7). Each belongs to one account and opens
 * only that account's repositories. Only the SHA-256 of a token is stored; lookups compare hashes in
 * constant time, and an expired token is refused (and removed later).
 */
export class AccessTokens {
  constructor(
    private readonly db: Sql,
    private readonly ttlMs: number = ACCESS_TOKEN_TTL_MS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Mints a token for `accountId` that works until `expiresAt` (one hour from now).
   * @returns the token in clear (never retrievable again) and its expiry as ISO 8601.
   */
  async mint(accountId: string): Promise<{ token: string; expiresAt: string }> {
    const token = ACCESS_TOKEN_PREFIX + randomSecret(32);
    const created = this.now();
    const expiresAt = new Date(created.getTime() + this.ttlMs).toISOString();
    await this.db.transaction(async () => {
      // Tokens expired for a day are of no use to anyone: keep the table small.
      await this.db.run('DELETE FROM repohost_access_tokens WHERE expires_at < ?', new Date(created.getTime() - 86_400_000).toISOString());
      await this.db.run('INSERT INTO repohost_access_tokens (id, account_id, token_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)', newId(), accountId, hashToken(token), expiresAt, created.toISOString());
    });
    return { token, expiresAt };
  }

  /** The account an unexpired access token belongs to, or undefined (unknown, expired, or not an access token). */
  async verify(token: string): Promise<Account | undefined> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
    const hash = hashToken(token);
    const row = (await this.db.get(`SELECT a.id, a.login, a.created_at, t.token_hash, t.expires_at
           FROM repohost_access_tokens t JOIN accounts a ON a.id = t.account_id
          WHERE t.token_hash = ?`, hash)) as { id: string; login: string; created_at: string; token_hash: Buffer; expires_at: string } | undefined;
    if (!row || !sameHash(row.token_hash, hash)) return undefined;
    if (Date.parse(row.expires_at) <= this.now().getTime()) return undefined;
    return { id: row.id, login: row.login, createdAt: row.created_at };
  }
}

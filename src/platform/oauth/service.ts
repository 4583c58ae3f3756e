import { OAuthError, OAuthErrorCode, type OAuthTokens } from '@modelcontextprotocol/server';
import type { Account } from '../accounts/service.js';
import { hashToken, sameHash } from '../accounts/tokens.js';
import { newId, randomSecret } from '../../shared/ids.js';
import type { Sql } from '../../shared/sql.js';
import type { OAuthClient } from './clientMetadata.js';
import type { OAuthClients } from './clients.js';
import { isS256Challenge, verifierMatches } from './pkce.js';
import { grantable, parseScope, scopeText, type Scope } from './scopes.js';
import type { OAuthOperations } from '../services.js';

/** Access tokens (`bya_`) and refresh tokens (`byr_`): 256 random bits each; only their SHA-256 is stored. */
export const ACCESS_TOKEN_PREFIX = 'bya_';
export const REFRESH_TOKEN_PREFIX = 'byr_';
/** Lifetimes. Codes are short-lived (OAuth 2.1 §4.1.2: at most 10 minutes recommended). */
export const CODE_TTL_MS = 2 * 60 * 1000;
export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** An authorization request that passed every check (OAuth 2.1 §4.1.1), ready for consent. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  /** Whether the request carried `redirect_uri` (then the token request must repeat it). */
  redirectUriSent: boolean;
  state: string | undefined;
  codeChallenge: string;
  /** What the client asked for, among Backyard's scopes (never empty). */
  scopes: Scope[];
  /** The RFC 8707 resource the tokens will be bound to: this server's `/mcp`. */
  resource: string;
}

/**
 * The outcome of checking an authorization request:
 * - `ok`: show the consent page;
 * - `show`: the client or redirect URI cannot be trusted, so the error is shown to the person and
 *   never sent to the redirect URI (OAuth 2.1 §4.1.2.1);
 * - `redirect`: the error goes back to the client's redirect URI, with `state` and `iss`.
 */
export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'show'; error: OAuthError }
  | { kind: 'redirect'; redirectUri: string; state: string | undefined; error: OAuthError };

/** The query of an authorization request, one value per parameter. */
export type AuthorizationParams = Record<string, string | undefined>;

/** A connection a person approved, as the dashboard lists it. */
export interface GrantSummary {
  id: string;
  clientId: string;
  /** Untrusted text from the client. */
  clientName: string;
  redirectUri: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
}

/** Who an access token acts for, and what it may do. */
export interface VerifiedAccess {
  account: Account;
  clientId: string;
  grantId: string;
  scopes: Scope[];
  /** Seconds since the epoch (as the MCP SDK's `AuthInfo.expiresAt`). */
  expiresAt: number;
}

const invalidGrant = (text: string) => new OAuthError(OAuthErrorCode.InvalidGrant, text);
const scopesOf = (text: string): Scope[] => parseScope(text).scopes;

/**
 * Backyard's authorization server for its MCP server (MCP "Authorization", revisions 2025-11-25
 * and 2026-07-28; OAuth 2.1): authorization codes with PKCE S256 only, bound to the client, its
 * exact redirect URI and the resource (RFC 8707); grants with rotating refresh tokens; revocation
 * (RFC 7009); and the check of access tokens that `/mcp` makes. No HTTP here: front ends hand over
 * parameters and map `OAuthError`s to responses.
 *
 * Codes, access and refresh tokens are random 256-bit secrets stored as SHA-256 and compared in
 * constant time.
 */
export class OAuthService implements OAuthOperations {
  constructor(
    private readonly db: Sql,
    readonly clients: OAuthClients,
    /** The resource identifier of this server's MCP endpoint, e.g. `http://localhost:4000/mcp`. */
    readonly resource: () => string,
    /** This authorization server's issuer identifier (RFC 8414 §2), e.g. `http://localhost:4000`. */
    readonly issuer: () => string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Checks an authorization request (OAuth 2.1 §4.1.1 and §4.1.2.1; RFC 7636; RFC 8707 §2): a known
   * client, a `redirect_uri` equal to one it registered (optional when it registered exactly one),
   * `response_type=code`, an S256 `code_challenge`, at least one known scope (others are ignored;
   * none asks for all) and, when given, `resource` equal to this server's `/mcp`.
   */
  async checkAuthorizationRequest(params: AuthorizationParams): Promise<AuthorizationCheck> {
    const found = await this.clients.find(params.client_id);
    if ('problem' in found) return { kind: 'show', error: new OAuthError(OAuthErrorCode.InvalidClient, found.problem) };
    const { client } = found;
    let redirectUri = params.redirect_uri;
    if (redirectUri === undefined) {
      if (client.redirectUris.length !== 1) {
        return { kind: 'show', error: new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no redirect_uri, and the client registered more than one.') };
      }
      redirectUri = client.redirectUris[0]!;
    } else if (!client.redirectUris.includes(redirectUri)) {
      return {
        kind: 'show',
        error: new OAuthError(OAuthErrorCode.InvalidRequest, 'The redirect_uri is not one the client registered (redirect URIs must match exactly, character for character).'),
      };
    }
    const state = params.state;
    const fail = (code: OAuthErrorCode, text: string): AuthorizationCheck => ({ kind: 'redirect', redirectUri: redirectUri!, state, error: new OAuthError(code, text) });
    if (params.response_type !== 'code') return fail(OAuthErrorCode.UnsupportedResponseType, 'Only response_type=code is supported.');
    if (!params.code_challenge) return fail(OAuthErrorCode.InvalidRequest, 'PKCE is required: send code_challenge and code_challenge_method=S256.');
    if (params.code_challenge_method !== 'S256') return fail(OAuthErrorCode.InvalidRequest, 'Only the PKCE code_challenge_method S256 is supported.');
    if (!isS256Challenge(params.code_challenge)) return fail(OAuthErrorCode.InvalidRequest, 'The code_challenge is not an S256 challenge (43 base64url characters).');
    const { scopes } = parseScope(params.scope);
    if (scopes.length === 0) return fail(OAuthErrorCode.InvalidScope, 'None of the requested scopes is known: ask for mcp:read and/or mcp:write.');
    if (params.resource !== undefined && !this.isOwnResource(params.resource)) {
      return fail(OAuthErrorCode.InvalidTarget, `Tokens of this server are only for ${this.resource()}; the resource ${params.resource} is not served here.`);
    }
    return {
      kind: 'ok',
      request: {
        client,
        redirectUri,
        redirectUriSent: params.redirect_uri !== undefined,
        state,
        codeChallenge: params.code_challenge,
        scopes,
        resource: this.resource(),
      },
    };
  }

  /**
   * Issues an authorization code after the person approved `request` with `scopes`: what was asked
   * (`grantable`: a request for mcp:write may be granted mcp:read alone) and the person allowed.
   * Single use, valid for `CODE_TTL_MS`.
   * @returns the code in clear; only its hash is stored.
   * @throws OAuthError `invalid_scope` when nothing asked was allowed (for the redirect URI).
   */
  async issueCode(account: Account, request: AuthorizationRequest, scopes: readonly Scope[]): Promise<string> {
    const granted = grantable(request.scopes).filter((s) => scopes.includes(s));
    if (granted.length === 0) throw new OAuthError(OAuthErrorCode.InvalidScope, 'None of the requested scopes was granted.');
    const code = randomSecret(32);
    const now = this.now();
    await this.db.transaction(async () => {
      await this.db.run('DELETE FROM oauth_codes WHERE expires_at <= ?', new Date(now - 60 * 60 * 1000).toISOString());
      await this.db.run(`INSERT INTO oauth_codes (code_hash, account_id, client_id, client_name, redirect_uri, redirect_uri_sent, code_challenge, scope, resource, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, hashToken(code),
          account.id,
          request.client.clientId,
          request.client.clientName,
          request.redirectUri,
          request.redirectUriSent ? 1 : 0,
          request.codeChallenge,
          scopeText(granted),
          request.resource,
          new Date(now + CODE_TTL_MS).toISOString());
    });
    return code;
  }

  /**
   * Redeems an authorization code (OAuth 2.1 §4.1.3): the same client, the same redirect URI when
   * the request carried one, the PKCE verifier of the challenge, and `resource` (when given) equal
   * to the one authorized. A code is good for one attempt: a second use revokes the tokens the first
   * one obtained (OAuth 2.1 §4.1.3).
   * @returns a new access token and refresh token of a new grant.
   * @throws OAuthError `invalid_request` (a parameter missing), `invalid_grant` (unknown, used,
   *   expired code, another client, another redirect URI, wrong verifier), `invalid_target`.
   */
  async exchangeCode(params: { code?: string; client_id?: string; redirect_uri?: string; code_verifier?: string; resource?: string }): Promise<OAuthTokens> {
    if (!params.code) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no code.');
    if (!params.client_id) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no client_id (public clients identify themselves with it).');
    if (!params.code_verifier) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no code_verifier (PKCE is required).');
    const hash = hashToken(params.code);
    const now = this.now();
    type CodeRow = {
      code_hash: Buffer; account_id: string; client_id: string; client_name: string; redirect_uri: string; redirect_uri_sent: number;
      code_challenge: string; scope: string; resource: string; expires_at: string; grant_id: string | null; redeemed_at: string | null;
    };
    const outcome = await this.db.transaction(async (): Promise<OAuthTokens | OAuthError> => {
        const row = (await this.db.get('SELECT * FROM oauth_codes WHERE code_hash = ?', hash)) as CodeRow | undefined;
        if (!row || !sameHash(row.code_hash, hash)) return invalidGrant('The authorization code is not valid.');
        if (row.redeemed_at !== null) {
          // A code used twice was intercepted or replayed: what the first use obtained is revoked.
          if (row.grant_id) await this.db.run('DELETE FROM oauth_grants WHERE id = ?', row.grant_id);
          return invalidGrant('The authorization code was already used; the tokens issued for it are revoked. Start the authorization again.');
        }
        await this.db.run('UPDATE oauth_codes SET redeemed_at = ? WHERE code_hash = ?', new Date(now).toISOString(), hash);
        if (row.expires_at <= new Date(now).toISOString()) return invalidGrant('The authorization code expired. Start the authorization again.');
        if (row.client_id !== params.client_id) return invalidGrant('The authorization code was issued to another client.');
        if ((row.redirect_uri_sent || params.redirect_uri !== undefined) && params.redirect_uri !== row.redirect_uri) {
          return invalidGrant('The redirect_uri differs from the one of the authorization request.');
        }
        if (!verifierMatches(params.code_verifier!, row.code_challenge)) return invalidGrant('The code_verifier does not match the code_challenge (PKCE S256).');
        if (params.resource !== undefined && params.resource !== row.resource) {
          return new OAuthError(OAuthErrorCode.InvalidTarget, `The code was issued for the resource ${row.resource}, not ${params.resource}.`);
        }
        const grantId = newId();
        await this.db.run(`INSERT INTO oauth_grants (id, account_id, client_id, client_name, redirect_uri, scope, resource, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, grantId, row.account_id, row.client_id, row.client_name, row.redirect_uri, row.scope, row.resource, new Date(now).toISOString());
        await this.db.run('UPDATE oauth_codes SET grant_id = ? WHERE code_hash = ?', grantId, hash);
        return await this.issueTokens(grantId, scopesOf(row.scope), scopesOf(row.scope));
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  /**
   * Refreshes (OAuth 2.1 §4.3): a refresh token of this client, unused and unexpired, is exchanged
   * for a new access token and a new refresh token (rotation, OAuth 2.1 §4.3.1). Presenting a
   * refresh token that was already rotated revokes the whole grant (the token leaked). `scope` may
   * narrow the new access token; `resource` must be the grant's.
   * @throws OAuthError `invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target`.
   */
  async refresh(params: { refresh_token?: string; client_id?: string; scope?: string; resource?: string }): Promise<OAuthTokens> {
    if (!params.refresh_token) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no refresh_token.');
    if (!params.client_id) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no client_id (public clients identify themselves with it).');
    const hash = hashToken(params.refresh_token);
    const now = this.now();
    const outcome = await this.db.transaction(async (): Promise<OAuthTokens | OAuthError> => {
        const row = (await this.db.get(`SELECT t.token_hash, t.kind, t.expires_at, t.used_at, g.id AS grant_id, g.client_id, g.scope, g.resource
               FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = ?`, hash)) as
          | { token_hash: Buffer; kind: string; expires_at: string; used_at: string | null; grant_id: string; client_id: string; scope: string; resource: string }
          | undefined;
        if (!row || row.kind !== 'refresh' || !sameHash(row.token_hash, hash)) return invalidGrant('The refresh token is not valid: it is unknown or was revoked.');
        if (row.client_id !== params.client_id) return invalidGrant('The refresh token was issued to another client.');
        if (row.used_at !== null) {
          await this.db.run('DELETE FROM oauth_grants WHERE id = ?', row.grant_id);
          return invalidGrant('The refresh token was already used; as it may have leaked, this connection is revoked. Authorize again.');
        }
        if (row.expires_at <= new Date(now).toISOString()) return invalidGrant('The refresh token expired. Authorize again.');
        if (params.resource !== undefined && params.resource !== row.resource) {
          return new OAuthError(OAuthErrorCode.InvalidTarget, `This grant is for the resource ${row.resource}, not ${params.resource}.`);
        }
        const granted = scopesOf(row.scope);
        let scopes = granted;
        if (params.scope !== undefined && params.scope !== '') {
          const asked = params.scope.split(' ').filter((w) => w !== '');
          const beyond = asked.filter((s) => !(granted as string[]).includes(s));
          if (beyond.length > 0) return new OAuthError(OAuthErrorCode.InvalidScope, `The scope ${beyond.join(' ')} was not granted to this client.`);
          scopes = granted.filter((s) => asked.includes(s));
        }
        await this.db.run('UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ?', new Date(now).toISOString(), hash);
        return await this.issueTokens(row.grant_id, scopes, granted);
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  /**
   * Revokes a token (RFC 7009 §2.1): a refresh token ends its whole grant, an access token only
   * itself. Unknown tokens, and tokens of another client, are answered as done (RFC 7009 §2.2).
   * @throws OAuthError `invalid_request` without `token` or `client_id`.
   */
  async revoke(params: { token?: string; client_id?: string }): Promise<void> {
    if (!params.token) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no token.');
    if (!params.client_id) throw new OAuthError(OAuthErrorCode.InvalidRequest, 'The request has no client_id (public clients identify themselves with it).');
    const hash = hashToken(params.token);
    const row = (await this.db.get('SELECT t.kind, g.id AS grant_id, g.client_id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = ?', hash)) as { kind: string; grant_id: string; client_id: string } | undefined;
    if (!row || row.client_id !== params.client_id) return;
    if (row.kind === 'refresh') await this.db.run('DELETE FROM oauth_grants WHERE id = ?', row.grant_id);
    else await this.db.run('DELETE FROM oauth_tokens WHERE token_hash = ?', hash);
  }

  /**
   * What an access token presented to `/mcp` allows (MCP "Authorization", "Access Token Usage";
   * RFC 8707 §2): a known, unexpired access token of a live grant whose resource is this server's
   * `/mcp`.
   * @returns `{ problem }` (for the `error_description` of the 401) otherwise.
   */
  async verifyAccessToken(token: string): Promise<VerifiedAccess | { problem: string }> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > 200) return { problem: 'The access token is not valid.' };
    const hash = hashToken(token);
    const row = (await this.db.get(`SELECT t.token_hash, t.kind, t.scope, t.expires_at, g.id AS grant_id, g.client_id, g.resource, g.last_used_at,
                a.id, a.login, a.created_at
           FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN accounts a ON a.id = g.account_id
          WHERE t.token_hash = ?`, hash)) as
      | { token_hash: Buffer; kind: string; scope: string; expires_at: string; grant_id: string; client_id: string; resource: string; last_used_at: string | null; id: string; login: string; created_at: string }
      | undefined;
    if (!row || row.kind !== 'access' || !sameHash(row.token_hash, hash)) return { problem: 'The access token is not valid: it is unknown or was revoked.' };
    const now = this.now();
    if (row.expires_at <= new Date(now).toISOString()) return { problem: 'The access token expired: refresh it.' };
    if (!this.isOwnResource(row.resource)) return { problem: `The access token was issued for ${row.resource}, not for ${this.resource()}.` };
    // Last use, for the dashboard: written at most once a minute per grant.
    if (!row.last_used_at || Date.parse(row.last_used_at) < now - 60_000) {
      await this.db.run('UPDATE oauth_grants SET last_used_at = ? WHERE id = ?', new Date(now).toISOString(), row.grant_id);
    }
    return {
      account: { id: row.id, login: row.login, createdAt: row.created_at },
      clientId: row.client_id,
      grantId: row.grant_id,
      scopes: scopesOf(row.scope),
      expiresAt: Math.floor(Date.parse(row.expires_at) / 1000),
    };
  }

  /** The connections an account approved, newest first. */
  async grantsOf(accountId: string): Promise<GrantSummary[]> {
    const rows = (await this.db.all('SELECT id, client_id, client_name, redirect_uri, scope, created_at, last_used_at FROM oauth_grants WHERE account_id = ? ORDER BY created_at DESC, id', accountId)) as Array<{ id: string; client_id: string; client_name: string; redirect_uri: string; scope: string; created_at: string; last_used_at: string | null }>;
    return rows.map((r) => ({
      id: r.id,
      clientId: r.client_id,
      clientName: r.client_name,
      redirectUri: r.redirect_uri,
      scopes: scopesOf(r.scope),
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    }));
  }

  /**
   * Ends one of an account's connections: its access and refresh tokens stop working at once.
   * @returns false when the account has no such grant.
   */
  async revokeGrant(accountId: string, grantId: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM oauth_grants WHERE id = ? AND account_id = ?', grantId, accountId)).changes > 0;
  }

  /** Whether a resource indicator names this server's `/mcp` (one trailing slash ignored). */
  private isOwnResource(resource: string): boolean {
    const own = this.resource();
    return resource === own || resource === `${own}/`;
  }

  private async issueTokens(grantId: string, scopes: readonly Scope[], grantScopes: readonly Scope[]): Promise<OAuthTokens> {
    const now = this.now();
    const access = ACCESS_TOKEN_PREFIX + randomSecret(32);
    const refresh = REFRESH_TOKEN_PREFIX + randomSecret(32);
    const insert = 'INSERT INTO oauth_tokens (token_hash, grant_id, kind, scope, expires_at) VALUES (?, ?, ?, ?, ?)';
    await this.db.run("DELETE FROM oauth_tokens WHERE grant_id = ? AND kind = 'access' AND expires_at <= ?", grantId, new Date(now).toISOString());
    await this.db.run(insert, hashToken(access), grantId, 'access', scopeText(scopes), new Date(now + ACCESS_TOKEN_TTL_MS).toISOString());
    await this.db.run(insert, hashToken(refresh), grantId, 'refresh', scopeText(grantScopes), new Date(now + REFRESH_TOKEN_TTL_MS).toISOString());
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: Math.floor(ACCESS_TOKEN_TTL_MS / 1000),
      refresh_token: refresh,
      scope: scopeText(scopes),
    };
  }
}

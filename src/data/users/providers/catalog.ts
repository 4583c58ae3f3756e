import { isDeepStrictEqual } from 'node:util';
import { ParseCode, ParseError } from '../../errors.js';
import type { ServerSettings } from '../../settings.js';
import { isPlainObject } from '../../values.js';
import type { AuthDataChanges } from '../authDataChanges.js';
import { askProvider } from './http.js';
import { verifyCode } from './codeFlow.js';
import { verifyFacebook } from './facebook.js';
import { IdTokens, refused } from './idToken.js';
import { isBuiltIn, type BuiltInProvider, type OidcOptions, type ProviderOptions } from './options.js';
import type { z } from 'zod';
import type { appleOptions, facebookOptions, githubOptions, googleOptions, microsoftOptions } from './options.js';
import type { OutboundFetch } from '../../../shared/outbound/client.js';

const LABELS: Record<BuiltInProvider, string> = { apple: 'Apple', google: 'Google', facebook: 'Facebook', github: 'GitHub', microsoft: 'Microsoft' };

/** Discovery documents are read once an hour per issuer. */
const DISCOVERY_MAX_AGE_MS = 3_600_000;

/**
 * The sign-in providers of Backend Apps (Parse Server 9's auth adapters): checks a
 * provider's `authData` with the provider before a signup, login or link uses it. One per server;
 * the app's `auth` setting says which providers it has and how they are reached.
 */
export class SignInProviders {
  private readonly idTokens: IdTokens;
  private readonly discovered = new Map<string, { jwksUri: string; at: number }>();

  /** @param fetch how providers are reached (public addresses only, shared/outbound/client.ts). */
  constructor(private readonly fetch: OutboundFetch) {
    this.idTokens = new IdTokens(fetch);
  }

  /**
   * Verifies each provider of `changes` given data, except `anonymous` (its id is its secret) and,
   * when `stored` is the user's current `authData`, providers whose data did not change (Parse
   * Server's `hasMutatedAuthData`: a logged-in user re-saving its data is not checked again).
   * @returns the changes with each provider's data as it is to be kept (a code exchanged for
   *   `{id, access_token}`).
   * @throws ParseError 101 (not configured, refused by the provider, unreachable), 142 (no code).
   */
  async verify(changes: AuthDataChanges, settings: ServerSettings, stored?: unknown): Promise<AuthDataChanges> {
    const verified: AuthDataChanges = { ...changes };
    for (const [provider, data] of Object.entries(changes)) {
      if (data === null || provider === 'anonymous') continue;
      if (isPlainObject(stored) && isDeepStrictEqual(stored[provider], data)) continue;
      verified[provider] = await this.verifyOne(provider, data, settings.auth[provider]);
    }
    return verified;
  }

  private async verifyOne(provider: string, data: Record<string, unknown>, options: ProviderOptions | undefined): Promise<Record<string, unknown>> {
    if (!isBuiltIn(provider)) {
      if (!options || !('oidc' in options)) throw unsupported();
      return this.verifyOidc(provider, data, options);
    }
    if (!options) throw refused(`${LABELS[provider]} auth is not configured.`);
    switch (provider) {
      case 'apple': {
        const o = options as z.output<typeof appleOptions>;
        await this.idTokens.verify(data.token, { label: 'Apple', jwksUri: o.jwksUri ?? 'https://appleid.apple.com/auth/keys', issuers: ['https://appleid.apple.com'], audience: o.clientId, id: data.id });
        return data;
      }
      case 'google': {
        const o = options as z.output<typeof googleOptions>;
        await this.idTokens.verify(data.id_token, {
          label: 'Google',
          jwksUri: o.jwksUri ?? 'https://www.googleapis.com/oauth2/v3/certs',
          issuers: ['accounts.google.com', 'https://accounts.google.com'],
          audience: o.clientId,
          id: data.id,
        });
        return data;
      }
      case 'facebook':
        return verifyFacebook(data, options as z.output<typeof facebookOptions>, this.fetch, this.idTokens);
      case 'github': {
        const o = options as z.output<typeof githubOptions>;
        const flow = { label: 'GitHub', form: 'github', tokenUrl: o.tokenUrl ?? 'https://github.com/login/oauth/access_token', userUrl: o.userUrl ?? 'https://api.github.com/user' } as const;
        return verifyCode(flow, data, o, this.fetch);
      }
      case 'microsoft': {
        const o = options as z.output<typeof microsoftOptions>;
        const flow = {
          label: 'Microsoft',
          form: 'microsoft',
          tokenUrl: o.tokenUrl ?? 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
          userUrl: o.userUrl ?? 'https://graph.microsoft.com/v1.0/me',
        } as const;
        return verifyCode(flow, data, o, this.fetch);
      }
    }
  }

  /** A generic OpenID Connect provider: `{id, id_token}` (or `token`), the ID token checked like Google's. */
  private async verifyOidc(provider: string, data: Record<string, unknown>, options: OidcOptions): Promise<Record<string, unknown>> {
    const jwksUri = options.jwksUri ?? (await this.discover(provider, options.issuer));
    await this.idTokens.verify(data.id_token ?? data.token, { label: provider, jwksUri, issuers: [options.issuer], audience: options.clientId, id: data.id });
    return data;
  }

  /** The `jwks_uri` of an issuer's discovery document (OpenID Connect Discovery 1.0, section 4). */
  private async discover(provider: string, issuer: string): Promise<string> {
    const known = this.discovered.get(issuer);
    if (known && Date.now() - known.at < DISCOVERY_MAX_AGE_MS) return known.jwksUri;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const { ok, status, body } = await askProvider(this.fetch, provider, url);
    const jwksUri = isPlainObject(body) && typeof body.jwks_uri === 'string' ? body.jwks_uri : undefined;
    if (!ok || !jwksUri || !URL.canParse(jwksUri)) throw refused(`${provider}'s discovery document at ${url} names no jwks_uri (HTTP ${status}); set auth.${provider}.jwksUri.`);
    this.discovered.set(issuer, { jwksUri, at: Date.now() });
    return jwksUri;
  }
}

export const unsupported = () => new ParseError(ParseCode.UNSUPPORTED_SERVICE, 'This authentication method is unsupported.');

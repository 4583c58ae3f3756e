import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { ParseCode, ParseError } from '../../errors.js';
import type { OutboundFetch } from '../../../shared/outbound/client.js';
import { OutboundError } from '../../../shared/outbound/errors.js';

/** Parse Server answers a sign-in it cannot verify with 101 and a sentence (its adapters' texts). */
export const refused = (message: string) => new ParseError(ParseCode.OBJECT_NOT_FOUND, message);

/** What an ID token must be to sign its subject in (Parse Server 9's apple.js, google.js, facebook.js). */
export interface IdTokenCheck {
  /** The provider as a person names it, for messages ("Apple"). */
  label: string;
  /** Where the provider publishes its signing keys (a JWKS). */
  jwksUri: string;
  /** The `iss` values the provider signs with. */
  issuers: readonly string[];
  /** The app's client ids: the token's `aud` must hold one. */
  audience: string | readonly string[];
  /** The `authData` id the token must be about (its `sub`). */
  id: unknown;
}

/** The key sets' cache: Parse Server keeps a provider's keys an hour (jwks-rsa's cacheMaxAge). */
const KEYS_MAX_AGE_MS = 3_600_000;
/** A token signed by a key not in the cached set fetches the set again, at most this often. */
const KEYS_COOLDOWN_MS = 30_000;
const KEYS_TIMEOUT_MS = 5_000;
/** A key set larger than this is not one (Google's and Apple's are a few KiB). */
const KEYS_MAX_BYTES = 256 * 1024;

/**
 * Verifies OpenID Connect ID tokens (RS256 JWTs) against their provider's published keys, with
 * jose: the signature, `exp` and `nbf`, the audience, the issuer and the subject, as Parse Server
 * does with jsonwebtoken and jwks-rsa. Its refusals keep Parse Server's texts (jsonwebtoken's
 * "jwt expired", "invalid signature", "jwt audience invalid. expected: ...").
 */
export class IdTokens {
  private readonly keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  /** @param fetch how keys are fetched (public addresses only, shared/outbound/client.ts). */
  constructor(private readonly fetch: OutboundFetch) {}

  private keys(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
    let set = this.keySets.get(jwksUri);
    if (!set) {
      set = createRemoteJWKSet(new URL(jwksUri), {
        cacheMaxAge: KEYS_MAX_AGE_MS,
        cooldownDuration: KEYS_COOLDOWN_MS,
        timeoutDuration: KEYS_TIMEOUT_MS,
        // A key set answers where it is: a redirect fails the read, as any address not public.
        [customFetch]: (url, options) =>
          this.fetch(url, { method: options.method, headers: options.headers, signal: options.signal, redirect: 'error', timeoutMs: KEYS_TIMEOUT_MS, maxBytes: KEYS_MAX_BYTES }),
      });
      this.keySets.set(jwksUri, set);
    }
    return set;
  }

  /**
   * @returns the token's claims.
   * @throws ParseError 101 for a missing, malformed, expired, wrongly signed or wrongly addressed
   *   token, or one about another subject; 101 naming the provider and the address when its keys
   *   cannot be read.
   */
  async verify(token: unknown, check: IdTokenCheck): Promise<JWTPayload> {
    if (typeof token !== 'string' || token === '') throw refused('id token is invalid for this user.');
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, this.keys(check.jwksUri), {
        algorithms: ['RS256'],
        audience: typeof check.audience === 'string' ? check.audience : [...check.audience],
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw refused(describe(error, token, check));
    }
    if (!claims.iss || !check.issuers.includes(claims.iss)) {
      throw refused(`id token not issued by correct OpenID provider - expected: ${check.issuers.join(' or ')} | from: ${claims.iss ?? 'nobody'}`);
    }
    if (claims.sub !== check.id) throw refused('auth data is invalid for this user.');
    return claims;
  }
}

/** A verification failure in Parse Server's words where it has them. */
function describe(error: unknown, token: string, check: IdTokenCheck): string {
  if (error instanceof errors.JWTExpired) return 'jwt expired';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'invalid signature';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return `jwt audience invalid. expected: ${[check.audience].flat().join(' or ')}`;
    if (error.claim === 'nbf') return 'jwt not active';
    return `jwt ${error.claim} invalid: ${error.reason}`;
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return `Unable to find matching key for Key ID: ${keyId(token) ?? 'none'}`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'invalid algorithm';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'jwt malformed';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error instanceof TypeError || error instanceof errors.JOSEError || error instanceof OutboundError) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${check.label}'s signing keys could not be read from ${check.jwksUri} (${(error as Error).message}${cause}); try again later.`;
  }
  return error instanceof Error ? error.message : String(error);
}

function keyId(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).kid;
  } catch {
    return undefined;
  }
}

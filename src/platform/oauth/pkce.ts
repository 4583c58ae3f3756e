import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: base64url of a SHA-256, 43 characters without padding. */
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

/** Whether a `code_challenge` has the form of an S256 challenge (RFC 7636 §4.2). */
export const isS256Challenge = (challenge: string): boolean => CHALLENGE.test(challenge);

/**
 * Whether `verifier` is the PKCE code verifier of `challenge` under S256, the only method Backyard
 * supports (OAuth 2.1 §4.1.3, RFC 7636 §4.6), compared in constant time.
 */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !isS256Challenge(challenge)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

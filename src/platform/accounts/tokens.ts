import { createHash, timingSafeEqual } from 'node:crypto';
import { randomSecret } from '../../shared/ids.js';

/** Account bearer tokens: `by_` and 256 random bits as base64url. Only their SHA-256 is stored. */
export const TOKEN_PREFIX = 'by_';

export const newToken = (): string => TOKEN_PREFIX + randomSecret(32);

/**
 * SHA-256 of a token. A salt would add nothing: tokens carry 256 random bits, so the hash cannot be
 * inverted by guessing, and an unsalted hash lets the store find a token by an index.
 */
export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Compares two token hashes in constant time. */
export const sameHash = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

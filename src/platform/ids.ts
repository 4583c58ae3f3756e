import { randomBytes } from 'node:crypto';

/**
 * A random URL-safe secret: `bytes` random bytes as base64url (24 bytes = 192 bits, 32 characters).
 * Used for app keys and tokens (issue 2: "random, URL-safe, at least 128 bits").
 */
export const randomSecret = (bytes = 24): string => randomBytes(bytes).toString('base64url');

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A random string of `length` characters from `[A-Za-z0-9]`, without modulo bias.
 * Interface A ids are opaque strings of this form (design.md, decision 1).
 */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

/** An opaque Interface A id (20 alphanumerics, about 119 bits). */
export const newId = (): string => randomAlphanumeric(20);

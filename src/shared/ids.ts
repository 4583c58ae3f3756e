import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * A random URL-safe secret: `bytes` random bytes as base64url (24 bytes = 192 bits, 32 characters).
 * Used for app keys and tokens ("random, URL-safe, at least 128 bits").
 */
export const randomSecret = (bytes = 24): string => randomBytes(bytes).toString('base64url');

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A random string of `length` characters from `[A-Za-z0-9]`, without modulo bias.
 * Interface A ids are opaque strings of this form (docs/design.md, decision 1).
 */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    // 248 = 4 * 62: bytes at or above it would favour the first characters.
    if (byte < 248) out += ALPHANUMERIC[byte % 62];
  }
  return out;
}

/**
 * Cryptographically random bytes taken from a pool filled 4 KiB at a time, as Node's own
 * `randomUUID` does: one call into OpenSSL per few hundred ids instead of one per id (every data API
 * create takes an objectId). Each byte is used once.
 */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
function nextRandomByte(): number {
  if (poolOffset === POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  return POOL[poolOffset++]!;
}

/** An opaque Interface A id (20 alphanumerics, about 119 bits). */
export const newId = (): string => randomAlphanumeric(20);

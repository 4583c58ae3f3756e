import { timingSafeEqual } from 'node:crypto';

/**
 * Whether two secrets are the same bytes, compared in time that does not depend on where they differ
 * (a key, a token of a mailed link), so that the answer's timing tells nothing about the secret.
 */
export function sameBytes(a: Buffer | string, b: Buffer | string): boolean {
  const x = typeof a === 'string' ? Buffer.from(a) : a;
  const y = typeof b === 'string' ? Buffer.from(b) : b;
  return x.length === y.length && timingSafeEqual(x, y);
}

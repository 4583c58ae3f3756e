import bcrypt from 'bcryptjs';

/**
 * Password hashing of the data API's users: bcrypt at cost 10, the hash Parse Server stores in
 * `_hashed_password`, so that users imported from Parse Server keep their passwords. Hashes of the
 * forms `$2a$`, `$2b$` and `$2y$` verify.
 */
export const BCRYPT_COST = 10;

/** Hashes a password (about 50–100 ms of work off the event loop's critical path). */
export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, BCRYPT_COST);
}

let dummyHash: Promise<string> | undefined;

/**
 * Whether `password` matches `hash`. Without a hash (no such user, or a user without a password)
 * it compares against a dummy hash and answers false, so that a wrong username takes as long as a
 * wrong password.
 */
export async function verifyPassword(password: string, hash: unknown): Promise<boolean> {
  if (typeof hash !== 'string' || !/^\$2[aby]\$\d\d\$/.test(hash)) {
    dummyHash ??= bcrypt.hash('backyard-dummy-password', BCRYPT_COST);
    await bcrypt.compare(password, await dummyHash);
    return false;
  }
  return bcrypt.compare(password, hash);
}

import type { Account } from '../platform/accounts/service.js';
import type { AccountService } from '../platform/accounts/service.js';
import { unauthorized } from '../errors.js';

/**
 * Resolves `Authorization: Bearer <account token>` (design.md, decision 2) to an account.
 * @throws ManagementError(unauthorized) naming what is missing or wrong.
 */
export function authenticateBearer(header: string | string[] | undefined, accounts: AccountService): Account {
  if (typeof header !== 'string' || header.trim() === '') {
    throw unauthorized('Authentication required: send the header "Authorization: Bearer <account token>" (create a token with `backyard account create <login>`).');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('The Authorization header must have the form "Bearer <account token>".');
  const account = accounts.authenticate(match[1]!);
  if (!account) throw unauthorized('The bearer token is not valid: it is unknown or was revoked.');
  return account;
}

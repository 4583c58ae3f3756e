import type { Account, TokenLimits } from '../platform/accounts/service.js';
import type { AccountOperations } from '../platform/services.js';
import type { CallerLimits } from '../../tools/limits.js';
import { unauthorized } from '../errors.js';

/** What a limited account token allows, as the operation table checks it (tools/limits.ts). */
export function tokenLimits(limits: TokenLimits): CallerLimits {
  return {
    readOnly: limits.readOnly ? 'this token is read-only (made with `backyard account token --read-only`): use a token made without --read-only.' : undefined,
    appId: limits.appId ?? undefined,
  };
}

/**
 * Resolves `Authorization: Bearer <account token>` (docs/design.md, decision 2) to an account and the
 * token's limits.
 * @throws ManagementError(unauthorized) naming what is missing or wrong.
 */
export async function authenticateBearer(header: string | string[] | undefined, accounts: Pick<AccountOperations, 'authenticateWithLimits'>): Promise<{ account: Account; limits: CallerLimits }> {
  if (typeof header !== 'string' || header.trim() === '') {
    throw unauthorized('Authentication required: send the header "Authorization: Bearer <account token>" (create a token with `backyard account create <login>`).');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('The Authorization header must have the form "Bearer <account token>".');
  const found = await accounts.authenticateWithLimits(match[1]!);
  if (!found) throw unauthorized('The bearer token is not valid: it is unknown or was revoked.');
  return { account: found.account, limits: tokenLimits(found.limits) };
}

import type { StoredRow } from '../storage/adapter.js';

/**
 * Who a data API request acts as (Parse's auth model): the master key, which bypasses ACLs and
 * class-level permissions, or a client key with or without a user's session.
 */
export interface Auth {
  master: boolean;
  /** The user whose session token came with the request. */
  user?: StoredRow;
  sessionToken?: string;
  installationId?: string;
  /**
   * ACL principals of the caller: `*`, the user's objectId, and `role:<name>` for each role the
   * user has, directly or through parent roles. Undefined for the master key (reads everything).
   */
  principals: readonly string[] | undefined;
}

export const MASTER: Auth = { master: true, principals: undefined };
export const PUBLIC: Auth = { master: false, principals: ['*'] };

type Acl = Record<string, { read?: boolean; write?: boolean }> | null;

/** Whether `auth` may read or write an object with `acl` (no ACL: public). */
export function aclAllows(acl: Acl, auth: Auth, perm: 'read' | 'write'): boolean {
  if (auth.master || acl === null) return true;
  return (auth.principals ?? []).some((p) => acl[p]?.[perm] === true);
}

/**
 * Whether a class-level permission entry admits the caller: `*`, the user's id, one of the user's
 * roles, or `requiresAuthentication` with a logged-in user. An absent entry admits everyone.
 */
export function clpAllows(entry: Record<string, boolean> | undefined, auth: Auth): boolean {
  if (auth.master || entry === undefined) return true;
  if (entry.requiresAuthentication === true && auth.user) return true;
  return (auth.principals ?? []).some((p) => entry[p] === true);
}

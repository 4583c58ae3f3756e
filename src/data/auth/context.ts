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

/**
 * What a query by a caller without the master key may read besides the rows of its own class, as
 * Parse Server 9 checks it (src/RestQuery.js and src/Controllers/DatabaseController.js). The query
 * compiler asks it for every class and field a `where` or `order` names; the engine answers from
 * the classes' CLP (DataEngine.queryAccess). Omitted for the master key, which is never restricted.
 */
export interface QueryAccess {
  /**
   * A sub-query (`$inQuery`, `$notInQuery`, `$select`, `$dontSelect`) reads `className`: Parse runs
   * it as a query of its own, so its CLP must allow `find`.
   * @throws ParseError 119 "Permission denied for action find on class X." otherwise.
   */
  checkFind(className: string): void;
  /**
   * The `where` a sub-query into `className` runs with: a client's `_Session` sub-query reads only
   * its own sessions, as any `_Session` query does (auth/sessions.ts, ownSessionsOnly).
   * @throws ParseError 209 for a `_Session` sub-query without a user.
   */
  scopeWhere(className: string, where: Record<string, unknown>): Record<string, unknown>;
  /** Whether CLP lets the caller `get` objects of the class (the owner of a `$relatedTo`; Parse's authorizeRelatedToQuery). */
  mayGet(className: string): boolean;
  /**
   * A `where` key (`use` "query") or an `order` key ("sort") of `className`, or its part before a dot.
   * @throws ParseError 119 when it is a field that `protectedFields` hide from the caller.
   */
  checkField(className: string, key: string, use: 'query' | 'sort'): void;
}

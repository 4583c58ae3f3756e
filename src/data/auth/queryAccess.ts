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

import type { QueryAccess } from '../auth/queryAccess.js';
import type { SchemaLookup } from '../types.js';
import type { Dialect, SqlFragment } from './dialect.js';

/** What compiling a query needs besides the query (compile.ts; the fragments of sql.ts read it too). */
export interface CompileOptions {
  /** The SQL of the database the query runs on. */
  dialect: Dialect;
  /** Fields of any class (for `$inQuery`/`$select` into other classes too). */
  schema: SchemaLookup;
  /** Restricts rows of another class in a sub-query to those the caller may read; omitted for the master key. */
  readable?: (className: string, alias: string) => SqlFragment | undefined;
  /** The caller's class-level permissions for every class and field the query names; omitted for the master key. */
  access?: QueryAccess;
}

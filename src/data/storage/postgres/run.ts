import type pg from 'pg';

/** Something that runs SQL with `?` placeholders: the pool, or one client inside a transaction. */
export type Run = (sql: string, params?: readonly unknown[]) => Promise<pg.QueryResult>;

import pg from 'pg';

/** Whether this run keeps Backend Apps on PostgreSQL (vitest.postgres.config.ts) rather than SQLite. */
export const onPostgres = Boolean(process.env.BACKYARD_TEST_DATABASE_URL);

/** Runs SQL on the run's PostgreSQL (only when `onPostgres`), answering its rows. */
export async function pgQuery(sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: process.env.BACKYARD_TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

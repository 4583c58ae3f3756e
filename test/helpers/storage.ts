import pg from 'pg';

/** Whether this run keeps Backend Apps on PostgreSQL (vitest.postgres.config.ts) rather than SQLite. */
export const onPostgres = Boolean(process.env.BACKYARD_TEST_DATABASE_URL);

/** Runs SQL on the run's PostgreSQL (only when `onPostgres`), or on the database of `url`, answering its rows. */
export async function pgQuery(sql: string, params: unknown[] = [], url = process.env.BACKYARD_TEST_DATABASE_URL): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

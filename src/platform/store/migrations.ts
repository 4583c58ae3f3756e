/**
 * Numbered migrations of `platform.db`, applied in order at start (issue 2). A migration is never
 * edited once released: add a new one. `version` is recorded in `PRAGMA user_version`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts and tokens',
    sql: `
      CREATE TABLE accounts (
        id         TEXT PRIMARY KEY,
        login      TEXT NOT NULL UNIQUE COLLATE NOCASE,
        created_at TEXT NOT NULL
      );
      CREATE TABLE account_tokens (
        id           TEXT PRIMARY KEY,
        account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash   BLOB NOT NULL UNIQUE,
        kind         TEXT NOT NULL CHECK (kind IN ('user', 'forward')),
        created_at   TEXT NOT NULL
      );
      CREATE INDEX account_tokens_account ON account_tokens(account_id);
    `,
  },
  {
    version: 2,
    name: 'backend apps',
    sql: `
      CREATE TABLE backend_apps (
        app_id          TEXT PRIMARY KEY,
        account_id      TEXT NOT NULL REFERENCES accounts(id),
        app_name        TEXT NOT NULL,
        rest_key        TEXT NOT NULL,
        javascript_key  TEXT NOT NULL,
        client_key      TEXT NOT NULL,
        dotnet_key      TEXT NOT NULL,
        webhook_key     TEXT NOT NULL,
        file_key        TEXT NOT NULL,
        master_key      TEXT NOT NULL,
        hosting_subdomain TEXT UNIQUE,
        created_at      TEXT NOT NULL,
        UNIQUE (account_id, app_name)
      );
    `,
  },
];

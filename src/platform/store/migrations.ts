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
  {
    version: 3,
    name: 'development environments and command executions',
    sql: `
      CREATE TABLE development_environments (
        id          TEXT PRIMARY KEY,
        account_id  TEXT NOT NULL REFERENCES accounts(id),
        chat_title  TEXT NOT NULL,
        created_at  TEXT NOT NULL
      );
      CREATE INDEX development_environments_account_title ON development_environments(account_id, chat_title);
      CREATE TABLE command_executions (
        id              TEXT PRIMARY KEY,
        environment_id  TEXT NOT NULL REFERENCES development_environments(id),
        command         TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('running', 'exited')),
        exit_code       INTEGER,
        stdout          TEXT NOT NULL DEFAULT '',
        stderr          TEXT NOT NULL DEFAULT '',
        owner           TEXT NOT NULL,
        heartbeat_at    TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        exited_at       TEXT
      );
      CREATE INDEX command_executions_environment ON command_executions(environment_id);
      CREATE INDEX command_executions_running ON command_executions(status) WHERE status = 'running';
    `,
  },
  {
    version: 4,
    name: 'repository host: access tokens and GitHub links',
    sql: `
      CREATE TABLE repohost_access_tokens (
        id          TEXT PRIMARY KEY,
        account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash  BLOB NOT NULL UNIQUE,
        expires_at  TEXT NOT NULL,
        created_at  TEXT NOT NULL
      );
      CREATE INDEX repohost_access_tokens_expiry ON repohost_access_tokens(expires_at);
      CREATE TABLE github_links (
        account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        github_login  TEXT NOT NULL COLLATE NOCASE,
        created_at    TEXT NOT NULL,
        PRIMARY KEY (account_id, github_login)
      );
    `,
  },
];

import type { Migration } from '../../shared/sqlite.js';

/** Numbered migrations of `platform.db`, applied in order at start. */
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
  {
    version: 5,
    name: 'web apps, deployments and their log rows; one subdomain namespace for hosting',
    sql: `
      CREATE TABLE web_apps (
        id                      TEXT PRIMARY KEY,
        account_id              TEXT NOT NULL REFERENCES accounts(id),
        app_name                TEXT NOT NULL,
        subdomain               TEXT NOT NULL UNIQUE,
        repository_owner_login  TEXT NOT NULL,
        repository_name         TEXT NOT NULL,
        branch_name             TEXT NOT NULL,
        root_dir_path           TEXT NOT NULL,
        environment_variables   TEXT NOT NULL DEFAULT '[]',
        port                    INTEGER,
        health_check_path       TEXT NOT NULL,
        auto_deploy             INTEGER NOT NULL,
        last_deployment_id      TEXT,
        active_deployment_id    TEXT,
        last_seen_sha           TEXT NOT NULL DEFAULT '',
        created_at              TEXT NOT NULL,
        UNIQUE (account_id, app_name)
      );
      CREATE INDEX web_apps_repository ON web_apps(repository_owner_login COLLATE NOCASE, repository_name, branch_name);
      CREATE TABLE deployments (
        id              TEXT PRIMARY KEY,
        web_app_id      TEXT NOT NULL REFERENCES web_apps(id),
        status          TEXT NOT NULL CHECK (status IN ('queued', 'building', 'starting', 'active', 'failed', 'superseded')),
        commit_sha      TEXT NOT NULL DEFAULT '',
        error           TEXT NOT NULL DEFAULT '',
        trigger         TEXT NOT NULL,
        image_id        TEXT,
        container_port  INTEGER,
        host_port       INTEGER,
        owner           TEXT NOT NULL,
        heartbeat_at    TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        finished_at     TEXT
      );
      CREATE INDEX deployments_web_app ON deployments(web_app_id, created_at);
      CREATE INDEX deployments_unfinished ON deployments(status) WHERE status IN ('queued', 'building', 'starting');
      CREATE TABLE deployment_logs (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        deployment_id  TEXT NOT NULL REFERENCES deployments(id),
        kind           TEXT NOT NULL CHECK (kind IN ('build', 'container')),
        source         TEXT NOT NULL,
        message        TEXT NOT NULL,
        time           TEXT NOT NULL
      );
      CREATE INDEX deployment_logs_deployment ON deployment_logs(deployment_id, kind, id);
      -- Hosted Backend Apps and Web Apps share one subdomain namespace: a name is never both.
      CREATE TRIGGER web_apps_subdomain_insert BEFORE INSERT ON web_apps
        WHEN EXISTS (SELECT 1 FROM backend_apps WHERE hosting_subdomain = NEW.subdomain)
        BEGIN SELECT RAISE(ABORT, 'subdomain already hosts a Backend App'); END;
      CREATE TRIGGER web_apps_subdomain_update BEFORE UPDATE OF subdomain ON web_apps
        WHEN EXISTS (SELECT 1 FROM backend_apps WHERE hosting_subdomain = NEW.subdomain)
        BEGIN SELECT RAISE(ABORT, 'subdomain already hosts a Backend App'); END;
      CREATE TRIGGER backend_apps_subdomain_insert BEFORE INSERT ON backend_apps
        WHEN NEW.hosting_subdomain IS NOT NULL AND EXISTS (SELECT 1 FROM web_apps WHERE subdomain = NEW.hosting_subdomain)
        BEGIN SELECT RAISE(ABORT, 'subdomain already serves a Web App'); END;
      CREATE TRIGGER backend_apps_subdomain_update BEFORE UPDATE OF hosting_subdomain ON backend_apps
        WHEN NEW.hosting_subdomain IS NOT NULL AND EXISTS (SELECT 1 FROM web_apps WHERE subdomain = NEW.hosting_subdomain)
        BEGIN SELECT RAISE(ABORT, 'subdomain already serves a Web App'); END;
    `,
  },
  {
    version: 6,
    name: 'dashboard sessions and one-time sign-in links',
    sql: `
      CREATE TABLE dashboard_sessions (
        token_hash  BLOB PRIMARY KEY,
        account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at  TEXT NOT NULL,
        expires_at  TEXT NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
      CREATE TABLE dashboard_sign_in_links (
        code_hash   BLOB PRIMARY KEY,
        account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at  TEXT NOT NULL,
        expires_at  TEXT NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: 'command executions that could not start',
    sql: `
      ALTER TABLE command_executions ADD COLUMN start_error TEXT;
    `,
  },
  {
    version: 8,
    name: 'Web Apps stopped with stopWebApp',
    sql: `
      ALTER TABLE web_apps ADD COLUMN stopped INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 9,
    name: 'Backend App server options (the ones an owner set, as JSON in Parse Server\'s shape)',
    sql: `
      ALTER TABLE backend_apps ADD COLUMN server_settings TEXT NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 10,
    name: 'MCP authorization (OAuth 2.1): registered clients, authorization codes, grants and their tokens',
    sql: `
      -- Clients registered with Dynamic Client Registration (RFC 7591); clients identified by a
      -- metadata document URL are fetched, not stored.
      CREATE TABLE oauth_clients (
        client_id      TEXT PRIMARY KEY,
        client_name    TEXT NOT NULL DEFAULT '',
        redirect_uris  TEXT NOT NULL,
        metadata       TEXT NOT NULL,
        created_at     TEXT NOT NULL
      );
      -- What a person approved for a client: one row per connection, listed in the dashboard.
      CREATE TABLE oauth_grants (
        id            TEXT PRIMARY KEY,
        account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        client_id     TEXT NOT NULL,
        client_name   TEXT NOT NULL,
        redirect_uri  TEXT NOT NULL,
        scope         TEXT NOT NULL,
        resource      TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        last_used_at  TEXT
      );
      CREATE INDEX oauth_grants_account ON oauth_grants(account_id, created_at);
      -- Single-use authorization codes (only their SHA-256); grant_id is set when the code is redeemed.
      CREATE TABLE oauth_codes (
        code_hash           BLOB PRIMARY KEY,
        account_id          TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        client_id           TEXT NOT NULL,
        client_name         TEXT NOT NULL,
        redirect_uri        TEXT NOT NULL,
        redirect_uri_sent   INTEGER NOT NULL,
        code_challenge      TEXT NOT NULL,
        scope               TEXT NOT NULL,
        resource            TEXT NOT NULL,
        expires_at          TEXT NOT NULL,
        grant_id            TEXT REFERENCES oauth_grants(id) ON DELETE SET NULL,
        redeemed_at         TEXT
      );
      CREATE INDEX oauth_codes_expiry ON oauth_codes(expires_at);
      -- Access and refresh tokens of a grant (only their SHA-256); a refresh token is rotated on use.
      CREATE TABLE oauth_tokens (
        token_hash  BLOB PRIMARY KEY,
        grant_id    TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
        kind        TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
        scope       TEXT NOT NULL,
        expires_at  TEXT NOT NULL,
        used_at     TEXT
      );
      CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
    `,
  },
  {
    version: 11,
    name: 'limited account tokens: read-only, or for one Backend App',
    sql: `
      ALTER TABLE account_tokens ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE account_tokens ADD COLUMN app_id TEXT;
    `,
  },
  {
    version: 12,
    name: 'cloud code versions: each deploy\'s tree as a gzipped tar, per Backend App',
    sql: `
      CREATE TABLE cloud_code_versions (
        app_id      TEXT NOT NULL REFERENCES backend_apps(app_id) ON DELETE CASCADE,
        version     INTEGER NOT NULL,
        created_at  TEXT NOT NULL,
        changes     TEXT NOT NULL,
        archive     BLOB NOT NULL,
        active      INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (app_id, version)
      );
    `,
  },
  {
    version: 13,
    name: "Backend Apps' webhooks and job schedule marks, read by every node (BACKYARD_ROLE) instead of files in one home",
    sql: `
      CREATE TABLE app_webhooks (
        app_id  TEXT PRIMARY KEY REFERENCES backend_apps(app_id) ON DELETE CASCADE,
        list    TEXT NOT NULL
      );
      CREATE TABLE app_job_schedules (
        app_id  TEXT PRIMARY KEY REFERENCES backend_apps(app_id) ON DELETE CASCADE
      );
    `,
  },
  {
    version: 14,
    name: 'Web Apps on Docker Swarm: how many replicas a Web App runs, and which deployments run as a swarm service',
    sql: `
      ALTER TABLE web_apps ADD COLUMN replicas INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE deployments ADD COLUMN service INTEGER NOT NULL DEFAULT 0;
    `,
  },
];

import type { Migration } from '../../shared/sqlite.js';

/**
 * The platform's tables on PostgreSQL (schema `backyard`): the same tables and columns as
 * `platform.db` (migrations.ts): its first 11 migrations as one, then each later one under its own
 * number, so one set of statements serves both. Where
 * SQLite compares without case (`COLLATE NOCASE`) the statements compare `lower()` and the indexes
 * here are on `lower()`; a column `rowid` stands for SQLite's implicit one (the insertion order,
 * which orders rows made in one millisecond); text sorts bytewise (`COLLATE "C"`) as SQLite's does. A change to the
 * platform's tables is a new migration in both lists.
 */
export const postgresMigrations: readonly Migration[] = [
  {
    version: 11,
    name: 'the platform tables as of platform.db version 11',
    sql: `
      CREATE TABLE accounts (
        id         TEXT COLLATE "C" PRIMARY KEY,
        login      TEXT COLLATE "C" NOT NULL,
        created_at TEXT COLLATE "C" NOT NULL
      );
      CREATE UNIQUE INDEX accounts_login ON accounts (lower(login));
      CREATE TABLE account_tokens (
        id           TEXT COLLATE "C" PRIMARY KEY,
        account_id   TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash   BYTEA NOT NULL UNIQUE,
        kind         TEXT COLLATE "C" NOT NULL CHECK (kind IN ('user', 'forward')),
        created_at   TEXT COLLATE "C" NOT NULL,
        read_only    INTEGER NOT NULL DEFAULT 0,
        app_id       TEXT COLLATE "C"
      );
      CREATE INDEX account_tokens_account ON account_tokens(account_id);

      CREATE TABLE backend_apps (
        app_id          TEXT COLLATE "C" PRIMARY KEY,
        account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
        app_name        TEXT COLLATE "C" NOT NULL,
        rest_key        TEXT COLLATE "C" NOT NULL,
        javascript_key  TEXT COLLATE "C" NOT NULL,
        client_key      TEXT COLLATE "C" NOT NULL,
        dotnet_key      TEXT COLLATE "C" NOT NULL,
        webhook_key     TEXT COLLATE "C" NOT NULL,
        file_key        TEXT COLLATE "C" NOT NULL,
        master_key      TEXT COLLATE "C" NOT NULL,
        hosting_subdomain TEXT COLLATE "C" UNIQUE,
        created_at      TEXT COLLATE "C" NOT NULL,
        server_settings TEXT COLLATE "C" NOT NULL DEFAULT '{}',
        UNIQUE (account_id, app_name)
      );

      CREATE TABLE development_environments (
        id          TEXT COLLATE "C" PRIMARY KEY,
        account_id  TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
        chat_title  TEXT COLLATE "C" NOT NULL,
        created_at  TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX development_environments_account_title ON development_environments(account_id, chat_title);
      CREATE TABLE command_executions (
        rowid           BIGINT GENERATED ALWAYS AS IDENTITY,
        id              TEXT COLLATE "C" PRIMARY KEY,
        environment_id  TEXT COLLATE "C" NOT NULL REFERENCES development_environments(id),
        command         TEXT NOT NULL,
        status          TEXT COLLATE "C" NOT NULL CHECK (status IN ('running', 'exited')),
        exit_code       INTEGER,
        stdout          TEXT NOT NULL DEFAULT '',
        stderr          TEXT NOT NULL DEFAULT '',
        owner           TEXT COLLATE "C" NOT NULL,
        heartbeat_at    TEXT COLLATE "C" NOT NULL,
        created_at      TEXT COLLATE "C" NOT NULL,
        exited_at       TEXT COLLATE "C",
        start_error     TEXT
      );
      CREATE INDEX command_executions_environment ON command_executions(environment_id);
      CREATE INDEX command_executions_running ON command_executions(status) WHERE status = 'running';

      CREATE TABLE repohost_access_tokens (
        id          TEXT COLLATE "C" PRIMARY KEY,
        account_id  TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash  BYTEA NOT NULL UNIQUE,
        expires_at  TEXT COLLATE "C" NOT NULL,
        created_at  TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX repohost_access_tokens_expiry ON repohost_access_tokens(expires_at);
      CREATE TABLE github_links (
        account_id    TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        github_login  TEXT COLLATE "C" NOT NULL,
        created_at    TEXT COLLATE "C" NOT NULL
      );
      CREATE UNIQUE INDEX github_links_key ON github_links (account_id, lower(github_login));

      CREATE TABLE web_apps (
        id                      TEXT COLLATE "C" PRIMARY KEY,
        account_id              TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
        app_name                TEXT COLLATE "C" NOT NULL,
        subdomain               TEXT COLLATE "C" NOT NULL UNIQUE,
        repository_owner_login  TEXT COLLATE "C" NOT NULL,
        repository_name         TEXT COLLATE "C" NOT NULL,
        branch_name             TEXT COLLATE "C" NOT NULL,
        root_dir_path           TEXT COLLATE "C" NOT NULL,
        environment_variables   TEXT NOT NULL DEFAULT '[]',
        port                    INTEGER,
        health_check_path       TEXT COLLATE "C" NOT NULL,
        auto_deploy             INTEGER NOT NULL,
        last_deployment_id      TEXT COLLATE "C",
        active_deployment_id    TEXT COLLATE "C",
        last_seen_sha           TEXT COLLATE "C" NOT NULL DEFAULT '',
        created_at              TEXT COLLATE "C" NOT NULL,
        stopped                 INTEGER NOT NULL DEFAULT 0,
        UNIQUE (account_id, app_name)
      );
      CREATE INDEX web_apps_repository ON web_apps(lower(repository_owner_login), repository_name, branch_name);
      CREATE TABLE deployments (
        rowid           BIGINT GENERATED ALWAYS AS IDENTITY,
        id              TEXT COLLATE "C" PRIMARY KEY,
        web_app_id      TEXT COLLATE "C" NOT NULL REFERENCES web_apps(id),
        status          TEXT COLLATE "C" NOT NULL CHECK (status IN ('queued', 'building', 'starting', 'active', 'failed', 'superseded')),
        commit_sha      TEXT COLLATE "C" NOT NULL DEFAULT '',
        error           TEXT NOT NULL DEFAULT '',
        trigger         TEXT COLLATE "C" NOT NULL,
        image_id        TEXT COLLATE "C",
        container_port  INTEGER,
        host_port       INTEGER,
        owner           TEXT COLLATE "C" NOT NULL,
        heartbeat_at    TEXT COLLATE "C" NOT NULL,
        created_at      TEXT COLLATE "C" NOT NULL,
        finished_at     TEXT COLLATE "C"
      );
      CREATE INDEX deployments_web_app ON deployments(web_app_id, created_at);
      CREATE INDEX deployments_unfinished ON deployments(status) WHERE status IN ('queued', 'building', 'starting');
      CREATE TABLE deployment_logs (
        id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        deployment_id  TEXT COLLATE "C" NOT NULL REFERENCES deployments(id),
        kind           TEXT COLLATE "C" NOT NULL CHECK (kind IN ('build', 'container')),
        source         TEXT COLLATE "C" NOT NULL,
        message        TEXT NOT NULL,
        time           TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX deployment_logs_deployment ON deployment_logs(deployment_id, kind, id);
      -- Hosted Backend Apps and Web Apps share one subdomain namespace: a name is never both.
      CREATE FUNCTION web_app_subdomain_free() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM backend_apps WHERE hosting_subdomain = NEW.subdomain) THEN
          RAISE EXCEPTION 'subdomain already hosts a Backend App' USING ERRCODE = '23505';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER web_apps_subdomain BEFORE INSERT OR UPDATE OF subdomain ON web_apps
        FOR EACH ROW EXECUTE FUNCTION web_app_subdomain_free();
      CREATE FUNCTION backend_app_subdomain_free() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.hosting_subdomain IS NOT NULL AND EXISTS (SELECT 1 FROM web_apps WHERE subdomain = NEW.hosting_subdomain) THEN
          RAISE EXCEPTION 'subdomain already serves a Web App' USING ERRCODE = '23505';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER backend_apps_subdomain BEFORE INSERT OR UPDATE OF hosting_subdomain ON backend_apps
        FOR EACH ROW EXECUTE FUNCTION backend_app_subdomain_free();

      CREATE TABLE dashboard_sessions (
        token_hash  BYTEA PRIMARY KEY,
        account_id  TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at  TEXT COLLATE "C" NOT NULL,
        expires_at  TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
      CREATE TABLE dashboard_sign_in_links (
        code_hash   BYTEA PRIMARY KEY,
        account_id  TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at  TEXT COLLATE "C" NOT NULL,
        expires_at  TEXT COLLATE "C" NOT NULL
      );

      CREATE TABLE oauth_clients (
        client_id      TEXT COLLATE "C" PRIMARY KEY,
        client_name    TEXT NOT NULL DEFAULT '',
        redirect_uris  TEXT NOT NULL,
        metadata       TEXT NOT NULL,
        created_at     TEXT COLLATE "C" NOT NULL
      );
      CREATE TABLE oauth_grants (
        id            TEXT COLLATE "C" PRIMARY KEY,
        account_id    TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        client_id     TEXT COLLATE "C" NOT NULL,
        client_name   TEXT NOT NULL,
        redirect_uri  TEXT NOT NULL,
        scope         TEXT NOT NULL,
        resource      TEXT NOT NULL,
        created_at    TEXT COLLATE "C" NOT NULL,
        last_used_at  TEXT COLLATE "C"
      );
      CREATE INDEX oauth_grants_account ON oauth_grants(account_id, created_at);
      CREATE TABLE oauth_codes (
        code_hash           BYTEA PRIMARY KEY,
        account_id          TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        client_id           TEXT COLLATE "C" NOT NULL,
        client_name         TEXT NOT NULL,
        redirect_uri        TEXT NOT NULL,
        redirect_uri_sent   INTEGER NOT NULL,
        code_challenge      TEXT NOT NULL,
        scope               TEXT NOT NULL,
        resource            TEXT NOT NULL,
        expires_at          TEXT COLLATE "C" NOT NULL,
        grant_id            TEXT COLLATE "C" REFERENCES oauth_grants(id) ON DELETE SET NULL,
        redeemed_at         TEXT COLLATE "C"
      );
      CREATE INDEX oauth_codes_expiry ON oauth_codes(expires_at);
      CREATE TABLE oauth_tokens (
        token_hash  BYTEA PRIMARY KEY,
        grant_id    TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
        kind        TEXT COLLATE "C" NOT NULL CHECK (kind IN ('access', 'refresh')),
        scope       TEXT NOT NULL,
        expires_at  TEXT COLLATE "C" NOT NULL,
        used_at     TEXT COLLATE "C"
      );
      CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
    `,
  },
  {
    version: 12,
    name: 'cloud code versions: each deploy\'s tree as a gzipped tar, per Backend App',
    sql: `
      CREATE TABLE cloud_code_versions (
        app_id      TEXT COLLATE "C" NOT NULL REFERENCES backend_apps(app_id) ON DELETE CASCADE,
        version     INTEGER NOT NULL,
        created_at  TEXT COLLATE "C" NOT NULL,
        changes     TEXT NOT NULL,
        archive     BYTEA NOT NULL,
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
        app_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES backend_apps(app_id) ON DELETE CASCADE,
        list    TEXT NOT NULL
      );
      CREATE TABLE app_job_schedules (
        app_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES backend_apps(app_id) ON DELETE CASCADE
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

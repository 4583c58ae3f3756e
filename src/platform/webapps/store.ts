import type { Account } from '../accounts/service.js';
import type { Db } from '../../shared/sqlite.js';
import type { EnvironmentVariable } from './names.js';

/**
 * The rows of Web Apps, deployments and deployment log rows in `platform.db` (migration 5). Plain
 * SQL, no rules: the service decides what may be read and written.
 */

/** Deployment states (design.md, decision 11). */
export type DeploymentStatus = 'queued' | 'building' | 'starting' | 'active' | 'failed' | 'superseded';
/** The states of a deployment that is still on its way. */
export const UNFINISHED: readonly DeploymentStatus[] = ['queued', 'building', 'starting'];
/** What started a deployment: createWebApp, updateWebApp, startDeployment, a push (built-in host) or the branch poller (GitHub). */
export type DeploymentTrigger = 'create' | 'update' | 'manual' | 'push' | 'poll';
/** `build`: rows of the image build; `container`: rows of the container kept after it was removed. */
export type LogKind = 'build' | 'container';

export interface WebAppRow {
  id: string;
  account_id: string;
  app_name: string;
  subdomain: string;
  repository_owner_login: string;
  repository_name: string;
  branch_name: string;
  /** Normalised: `.` or `a/b`. */
  root_dir_path: string;
  /** JSON array of `{key, value}`: values never leave this table except into the container. */
  environment_variables: string;
  /** Null: from the image's `EXPOSE`, else 8080. */
  port: number | null;
  health_check_path: string;
  auto_deploy: 0 | 1;
  last_deployment_id: string | null;
  active_deployment_id: string | null;
  /** The branch head the poller last saw (GitHub autoDeploy). */
  last_seen_sha: string;
  created_at: string;
  /** 1 after stopWebApp, until startWebApp or a new active deployment. */
  stopped: 0 | 1;
}

export interface DeploymentRow {
  id: string;
  web_app_id: string;
  status: DeploymentStatus;
  commit_sha: string;
  error: string;
  trigger: DeploymentTrigger;
  image_id: string | null;
  /** The port the app listens on inside its container. */
  container_port: number | null;
  /** The loopback port the container is published on (the proxy's target); may change when the engine restarts it. */
  host_port: number | null;
  /** `<host>/<pid>/<random>` of the Backyard process running the pipeline (devenvs/owners.ts). */
  owner: string;
  heartbeat_at: string;
  created_at: string;
  finished_at: string | null;
}

export interface LogRow {
  source: string;
  message: string;
  time: string;
}

/** What the proxy needs for a subdomain: the app and, when one is active, its container's loopback port. */
export interface RouteRow {
  id: string;
  app_name: string;
  active_deployment_id: string | null;
  host_port: number | null;
  last_status: DeploymentStatus | null;
}

/** The settings updateWebApp may change. */
export type SettingsUpdate = Partial<
  Pick<WebAppRow, 'branch_name' | 'root_dir_path' | 'port' | 'health_check_path' | 'auto_deploy'> & { variables: EnvironmentVariable[] }
>;

export const variablesOf = (row: WebAppRow): EnvironmentVariable[] => JSON.parse(row.environment_variables) as EnvironmentVariable[];

/**
 * Prepared statements over the three tables. The proxy's `route` lookups are remembered (one per
 * request otherwise) and forgotten on every write that can change a route: writes go through here.
 */
export class WebAppStore {
  private readonly s;
  private readonly routes = new Map<string, RouteRow | undefined>();

  constructor(readonly db: Db) {
    this.s = {
      subdomainTaken: db.prepare('SELECT 1 FROM backend_apps WHERE hosting_subdomain = ? UNION ALL SELECT 1 FROM web_apps WHERE subdomain = ?'),
      insertApp: db.prepare(
        `INSERT INTO web_apps (id, account_id, app_name, subdomain, repository_owner_login, repository_name, branch_name, root_dir_path,
           environment_variables, port, health_check_path, auto_deploy, last_seen_sha, created_at)
         VALUES (@id, @account_id, @app_name, @subdomain, @repository_owner_login, @repository_name, @branch_name, @root_dir_path,
           @environment_variables, @port, @health_check_path, @auto_deploy, @last_seen_sha, @created_at)`,
      ),
      app: db.prepare('SELECT * FROM web_apps WHERE id = ? AND account_id = ?'),
      appById: db.prepare('SELECT * FROM web_apps WHERE id = ?'),
      appByName: db.prepare('SELECT * FROM web_apps WHERE account_id = ? AND app_name = ?'),
      apps: db.prepare('SELECT id, app_name FROM web_apps WHERE account_id = ? ORDER BY created_at, id'),
      appsNamed: db.prepare('SELECT id, app_name FROM web_apps WHERE account_id = ? AND app_name = ?'),
      route: db.prepare(
        `SELECT w.id, w.app_name, w.active_deployment_id, a.host_port, l.status AS last_status
         FROM web_apps w
         LEFT JOIN deployments a ON a.id = w.active_deployment_id
         LEFT JOIN deployments l ON l.id = w.last_deployment_id
         WHERE w.subdomain = ?`,
      ),
      pushTargets: db.prepare(
        `SELECT * FROM web_apps WHERE auto_deploy = 1 AND repository_owner_login = ? COLLATE NOCASE AND repository_name = ? AND branch_name = ?`,
      ),
      autoDeploy: db.prepare('SELECT * FROM web_apps WHERE auto_deploy = 1'),
      lastSeen: db.prepare('UPDATE web_apps SET last_seen_sha = ? WHERE id = ?'),
      account: db.prepare('SELECT id, login, created_at FROM accounts WHERE id = ?'),
      insertDeployment: db.prepare(
        `INSERT INTO deployments (id, web_app_id, status, trigger, owner, heartbeat_at, created_at)
         VALUES (@id, @web_app_id, 'queued', @trigger, @owner, @created_at, @created_at)`,
      ),
      setLast: db.prepare('UPDATE web_apps SET last_deployment_id = ? WHERE id = ?'),
      deployment: db.prepare('SELECT * FROM deployments WHERE id = ? AND web_app_id = ?'),
      deploymentById: db.prepare('SELECT * FROM deployments WHERE id = ?'),
      // rowid is the order of insertion: created_at can tie within a millisecond.
      deployments: db.prepare('SELECT * FROM deployments WHERE web_app_id = ? ORDER BY rowid DESC LIMIT ?'),
      newer: db.prepare('SELECT 1 FROM deployments WHERE web_app_id = ? AND rowid > (SELECT rowid FROM deployments WHERE id = ?) LIMIT 1'),
      status: db.prepare(`UPDATE deployments SET status = ?, heartbeat_at = ? WHERE id = ? AND status IN ('queued', 'building', 'starting')`),
      commit: db.prepare('UPDATE deployments SET commit_sha = ? WHERE id = ?'),
      image: db.prepare('UPDATE deployments SET image_id = ? WHERE id = ?'),
      ports: db.prepare('UPDATE deployments SET container_port = ?, host_port = ? WHERE id = ?'),
      hostPort: db.prepare('UPDATE deployments SET host_port = ? WHERE id = ?'),
      finish: db.prepare(
        `UPDATE deployments SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status IN ('queued', 'building', 'starting')`,
      ),
      supersedeActive: db.prepare(`UPDATE deployments SET status = 'superseded', finished_at = ? WHERE id = ? AND status = 'active'`),
      makeActive: db.prepare(`UPDATE deployments SET status = 'active', finished_at = ? WHERE id = ? AND status = 'starting'`),
      // A new active deployment runs the app again, stopped or not.
      setActive: db.prepare('UPDATE web_apps SET active_deployment_id = ?, stopped = 0 WHERE id = ?'),
      setStopped: db.prepare('UPDATE web_apps SET stopped = ? WHERE id = ?'),
      unfinishedOf: db.prepare(`SELECT * FROM deployments WHERE web_app_id = ? AND status IN ('queued', 'building', 'starting')`),
      deploymentIds: db.prepare('SELECT id FROM deployments WHERE web_app_id = ?'),
      deleteLogs: db.prepare('DELETE FROM deployment_logs WHERE deployment_id IN (SELECT id FROM deployments WHERE web_app_id = ?)'),
      deleteDeployments: db.prepare('DELETE FROM deployments WHERE web_app_id = ?'),
      deleteApp: db.prepare('DELETE FROM web_apps WHERE id = ?'),
      unfinished: db.prepare(`SELECT * FROM deployments WHERE status IN ('queued', 'building', 'starting') ORDER BY rowid`),
      active: db.prepare(`SELECT * FROM deployments WHERE status = 'active'`),
      heartbeat: db.prepare(`UPDATE deployments SET heartbeat_at = ? WHERE owner = ? AND status IN ('queued', 'building', 'starting')`),
      insertLog: db.prepare('INSERT INTO deployment_logs (deployment_id, kind, source, message, time) VALUES (?, ?, ?, ?, ?)'),
      pruneLogs: db.prepare(
        'DELETE FROM deployment_logs WHERE deployment_id = ? AND kind = ? AND id <= (SELECT id FROM deployment_logs WHERE deployment_id = ? AND kind = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
      ),
      logsAfter: db.prepare('SELECT id, source, message, time FROM deployment_logs WHERE deployment_id = ? AND kind = ? AND id > ? ORDER BY id LIMIT ?'),
      lastLogs: db.prepare(
        'SELECT source, message, time FROM (SELECT id, source, message, time FROM deployment_logs WHERE deployment_id = ? AND kind = ? ORDER BY id DESC LIMIT ?) ORDER BY id',
      ),
    };
  }

  /** True when a hosted Backend App or a Web App already uses `subdomain`. */
  subdomainTaken(subdomain: string): boolean {
    return this.s.subdomainTaken.get(subdomain, subdomain) !== undefined;
  }

  insertApp(row: Omit<WebAppRow, 'last_deployment_id' | 'active_deployment_id' | 'stopped'>): void {
    this.routes.clear();
    this.s.insertApp.run(row);
  }

  /** The Web App `id` when it belongs to `accountId`. */
  app(accountId: string, id: string): WebAppRow | undefined {
    return this.s.app.get(id, accountId) as WebAppRow | undefined;
  }

  /** The Web App `id`, whoever owns it (Backyard's own housekeeping, never for a caller). */
  appById(id: string): WebAppRow | undefined {
    return this.s.appById.get(id) as WebAppRow | undefined;
  }

  appByName(accountId: string, name: string): WebAppRow | undefined {
    return this.s.appByName.get(accountId, name) as WebAppRow | undefined;
  }

  /** An account's Web Apps, oldest first; only the one named exactly `name` when given. */
  apps(accountId: string, name?: string): Array<{ id: string; app_name: string }> {
    return (name === undefined ? this.s.apps.all(accountId) : this.s.appsNamed.all(accountId, name)) as Array<{ id: string; app_name: string }>;
  }

  /** The proxy's view of the Web App at `subdomain`, or undefined when none is there. */
  route(subdomain: string): RouteRow | undefined {
    if (this.routes.has(subdomain)) return this.routes.get(subdomain);
    const row = this.s.route.get(subdomain) as RouteRow | undefined;
    if (this.routes.size > 10_000) this.routes.clear();
    this.routes.set(subdomain, row);
    return row;
  }

  /** Changes the settings given (only those). */
  updateSettings(id: string, update: SettingsUpdate): void {
    this.routes.clear();
    const columns: Record<string, unknown> = {};
    if (update.branch_name !== undefined) columns.branch_name = update.branch_name;
    if (update.root_dir_path !== undefined) columns.root_dir_path = update.root_dir_path;
    if (update.port !== undefined) columns.port = update.port;
    if (update.health_check_path !== undefined) columns.health_check_path = update.health_check_path;
    if (update.auto_deploy !== undefined) columns.auto_deploy = update.auto_deploy;
    if (update.variables !== undefined) columns.environment_variables = JSON.stringify(update.variables);
    const names = Object.keys(columns);
    if (names.length === 0) return;
    // Column names come from the fixed list above, never from a caller.
    this.db.prepare(`UPDATE web_apps SET ${names.map((n) => `${n} = @${n}`).join(', ')} WHERE id = @id`).run({ ...columns, id });
  }

  /** Web Apps with autoDeploy that deploy `owner/repo` at `branch`. */
  pushTargets(owner: string, repo: string, branch: string): WebAppRow[] {
    return this.s.pushTargets.all(owner, repo, branch) as WebAppRow[];
  }

  /** Every Web App with autoDeploy on. */
  autoDeployApps(): WebAppRow[] {
    return this.s.autoDeploy.all() as WebAppRow[];
  }

  setLastSeen(id: string, sha: string): void {
    this.s.lastSeen.run(sha, id);
  }

  account(id: string): Account | undefined {
    const row = this.s.account.get(id) as { id: string; login: string; created_at: string } | undefined;
    return row && { id: row.id, login: row.login, createdAt: row.created_at };
  }

  /** Adds a queued deployment and makes it the app's last one. */
  insertDeployment(row: Pick<DeploymentRow, 'id' | 'web_app_id' | 'trigger' | 'owner' | 'created_at'>): void {
    this.routes.clear();
    this.db.transaction(() => {
      this.s.insertDeployment.run(row);
      this.s.setLast.run(row.id, row.web_app_id);
    })();
  }

  /** The deployment `id` when it belongs to the Web App `webAppId`. */
  deployment(webAppId: string, id: string): DeploymentRow | undefined {
    return this.s.deployment.get(id, webAppId) as DeploymentRow | undefined;
  }

  deploymentById(id: string | null): DeploymentRow | undefined {
    return id === null ? undefined : (this.s.deploymentById.get(id) as DeploymentRow | undefined);
  }

  /** The newest `limit` deployments of the Web App `webAppId`, newest first. */
  deployments(webAppId: string, limit: number): DeploymentRow[] {
    return this.s.deployments.all(webAppId, limit) as DeploymentRow[];
  }

  /** True when the app has a deployment created after `id`. */
  hasNewer(webAppId: string, id: string): boolean {
    return this.s.newer.get(webAppId, id) !== undefined;
  }

  /** Moves an unfinished deployment to `building` or `starting`. @returns false when it was already finished. */
  setStatus(id: string, status: 'building' | 'starting', now: string): boolean {
    this.routes.clear();
    return this.s.status.run(status, now, id).changes > 0;
  }

  setCommit(id: string, sha: string): void {
    this.s.commit.run(sha, id);
  }

  setImage(id: string, imageId: string): void {
    this.s.image.run(imageId, id);
  }

  setPorts(id: string, containerPort: number, hostPort: number | null): void {
    this.routes.clear();
    this.s.ports.run(containerPort, hostPort, id);
  }

  setHostPort(id: string, hostPort: number | null): void {
    this.routes.clear();
    this.s.hostPort.run(hostPort, id);
  }

  /** Ends an unfinished deployment as `failed` (with `error`) or `superseded`. @returns false when it was already finished. */
  finish(id: string, status: 'failed' | 'superseded', error: string, now: string): boolean {
    this.routes.clear();
    return this.s.finish.run(status, error, now, id).changes > 0;
  }

  /**
   * The switch of traffic, in one transaction: the deployment `id` (starting) becomes active and the
   * app's active one, and the one active before becomes superseded.
   * @returns the id of the deployment that was active before, if any; undefined `switched` when `id` was no longer starting.
   */
  activate(webAppId: string, id: string, now: string): { switched: boolean; previous: string | undefined } {
    this.routes.clear();
    return this.db.transaction(() => {
      if (this.s.makeActive.run(now, id).changes === 0) return { switched: false, previous: undefined };
      const app = this.appById(webAppId);
      const previous = app?.active_deployment_id ?? undefined;
      if (previous && previous !== id) this.s.supersedeActive.run(now, previous);
      this.s.setActive.run(id, webAppId);
      return { switched: true, previous: previous === id ? undefined : previous };
    }).immediate();
  }

  /** Marks the app stopped (stopWebApp) or not (startWebApp). */
  setStopped(id: string, stopped: boolean): void {
    this.routes.clear();
    this.s.setStopped.run(stopped ? 1 : 0, id);
  }

  /** The app's deployments still queued, building or starting. */
  unfinishedOf(webAppId: string): DeploymentRow[] {
    return this.s.unfinishedOf.all(webAppId) as DeploymentRow[];
  }

  /** The ids of all the app's deployments. */
  deploymentIds(webAppId: string): string[] {
    return (this.s.deploymentIds.all(webAppId) as Array<{ id: string }>).map((r) => r.id);
  }

  /** Removes the app, its deployments and their log rows, in one transaction; its subdomain is free then. */
  deleteApp(webAppId: string): void {
    this.routes.clear();
    this.db.transaction(() => {
      this.s.deleteLogs.run(webAppId);
      this.s.deleteDeployments.run(webAppId);
      this.s.deleteApp.run(webAppId);
    }).immediate();
    this.routes.clear();
  }

  /** Every deployment still queued, building or starting, whoever runs it, oldest first. */
  unfinished(): DeploymentRow[] {
    return this.s.unfinished.all() as DeploymentRow[];
  }

  /** Every active deployment. */
  activeDeployments(): DeploymentRow[] {
    return this.s.active.all() as DeploymentRow[];
  }

  /** Refreshes the heartbeat of every unfinished deployment of `owner`. */
  heartbeat(owner: string, now: string): void {
    this.s.heartbeat.run(now, owner);
  }

  insertLog(deploymentId: string, kind: LogKind, row: LogRow): void {
    this.s.insertLog.run(deploymentId, kind, row.source, row.message, row.time);
  }

  /** Several rows in one transaction. */
  insertLogs(deploymentId: string, kind: LogKind, rows: readonly LogRow[]): void {
    this.db.transaction(() => {
      for (const row of rows) this.insertLog(deploymentId, kind, row);
    })();
  }

  /** Keeps only the last `keep` rows of one kind (a build that prints without end must not fill the disk). */
  pruneLogs(deploymentId: string, kind: LogKind, keep: number): void {
    this.s.pruneLogs.run(deploymentId, kind, deploymentId, kind, keep);
  }

  /** Rows of one kind written after the row `afterId` (0: from the first), at most `limit`, in order, with their ids. */
  logsAfter(deploymentId: string, kind: LogKind, afterId: number, limit: number): Array<LogRow & { id: number }> {
    return this.s.logsAfter.all(deploymentId, kind, afterId, limit) as Array<LogRow & { id: number }>;
  }

  /** The last `limit` rows of one kind, in time order. */
  lastLogs(deploymentId: string, kind: LogKind, limit: number): LogRow[] {
    return this.s.lastLogs.all(deploymentId, kind, limit) as LogRow[];
  }
}

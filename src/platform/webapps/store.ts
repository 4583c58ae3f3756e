import type { Account } from '../accounts/service.js';
import type { Sql } from '../../shared/sql.js';
import type { EnvironmentVariable } from './names.js';

/**
 * The rows of Web Apps, deployments and deployment log rows in `platform.db` (migration 5). Plain
 * SQL, no rules: the service decides what may be read and written.
 */

/** Deployment states (docs/design.md, decision 11). */
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
  /** How many tasks its swarm service runs (1 to 10, migration 14); plain containers are always one. */
  replicas: number;
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
  /** 1 when the deployment runs as a swarm service's tasks (swarm.ts), 0 for a plain container (migration 14). */
  service: 0 | 1;
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
  /** 1 when the active deployment runs as a swarm service: the proxy goes to its tasks (tasks.ts). */
  service: 0 | 1 | null;
  /** The port the app listens on inside its containers. */
  container_port: number | null;
  health_check_path: string;
  /** 1 after stopWebApp (its service then runs no task). */
  stopped: 0 | 1;
}

/** The settings updateWebApp may change. */
export type SettingsUpdate = Partial<
  Pick<WebAppRow, 'branch_name' | 'root_dir_path' | 'port' | 'health_check_path' | 'auto_deploy' | 'replicas'> & { variables: EnvironmentVariable[] }
>;

export const variablesOf = (row: WebAppRow): EnvironmentVariable[] => JSON.parse(row.environment_variables) as EnvironmentVariable[];

/** The statements over the three tables (the same text on SQLite and PostgreSQL). */
const SQL = {
  subdomainTaken: 'SELECT 1 FROM backend_apps WHERE hosting_subdomain = ? UNION ALL SELECT 1 FROM web_apps WHERE subdomain = ?',
  insertApp: `INSERT INTO web_apps (id, account_id, app_name, subdomain, repository_owner_login, repository_name, branch_name, root_dir_path,
       environment_variables, port, health_check_path, auto_deploy, last_seen_sha, created_at, replicas)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  app: 'SELECT * FROM web_apps WHERE id = ? AND account_id = ?',
  appById: 'SELECT * FROM web_apps WHERE id = ?',
  appByName: 'SELECT * FROM web_apps WHERE account_id = ? AND app_name = ?',
  apps: 'SELECT id, app_name FROM web_apps WHERE account_id = ? ORDER BY created_at, id',
  appsNamed: 'SELECT id, app_name FROM web_apps WHERE account_id = ? AND app_name = ?',
  route: `SELECT w.id, w.app_name, w.active_deployment_id, a.host_port, l.status AS last_status, a.service, a.container_port, w.health_check_path, w.stopped
     FROM web_apps w
     LEFT JOIN deployments a ON a.id = w.active_deployment_id
     LEFT JOIN deployments l ON l.id = w.last_deployment_id
     WHERE w.subdomain = ?`,
  pushTargets: `SELECT * FROM web_apps WHERE auto_deploy = 1 AND lower(repository_owner_login) = lower(?) AND repository_name = ? AND branch_name = ?`,
  autoDeploy: 'SELECT * FROM web_apps WHERE auto_deploy = 1',
  lastSeen: 'UPDATE web_apps SET last_seen_sha = ? WHERE id = ?',
  account: 'SELECT id, login, created_at FROM accounts WHERE id = ?',
  insertDeployment: `INSERT INTO deployments (id, web_app_id, status, trigger, owner, heartbeat_at, created_at)
     VALUES (?, ?, 'queued', ?, ?, ?, ?)`,
  setLast: 'UPDATE web_apps SET last_deployment_id = ? WHERE id = ?',
  deployment: 'SELECT * FROM deployments WHERE id = ? AND web_app_id = ?',
  deploymentById: 'SELECT * FROM deployments WHERE id = ?',
  // rowid is the order of insertion: created_at can tie within a millisecond.
  deployments: 'SELECT * FROM deployments WHERE web_app_id = ? ORDER BY rowid DESC LIMIT ?',
  newer: 'SELECT 1 FROM deployments WHERE web_app_id = ? AND rowid > (SELECT rowid FROM deployments WHERE id = ?) LIMIT 1',
  status: `UPDATE deployments SET status = ?, heartbeat_at = ? WHERE id = ? AND status IN ('queued', 'building', 'starting')`,
  commit: 'UPDATE deployments SET commit_sha = ? WHERE id = ?',
  image: 'UPDATE deployments SET image_id = ? WHERE id = ?',
  ports: 'UPDATE deployments SET container_port = ?, host_port = ? WHERE id = ?',
  hostPort: 'UPDATE deployments SET host_port = ? WHERE id = ?',
  service: 'UPDATE deployments SET service = ?, container_port = ?, host_port = NULL WHERE id = ?',
  finish: `UPDATE deployments SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status IN ('queued', 'building', 'starting')`,
  supersedeActive: `UPDATE deployments SET status = 'superseded', finished_at = ? WHERE id = ? AND status = 'active'`,
  makeActive: `UPDATE deployments SET status = 'active', finished_at = ? WHERE id = ? AND status = 'starting'`,
  // A new active deployment runs the app again, stopped or not.
  setActive: 'UPDATE web_apps SET active_deployment_id = ?, stopped = 0 WHERE id = ?',
  setStopped: 'UPDATE web_apps SET stopped = ? WHERE id = ?',
  unfinishedOf: `SELECT * FROM deployments WHERE web_app_id = ? AND status IN ('queued', 'building', 'starting')`,
  deploymentIds: 'SELECT id FROM deployments WHERE web_app_id = ?',
  deleteLogs: 'DELETE FROM deployment_logs WHERE deployment_id IN (SELECT id FROM deployments WHERE web_app_id = ?)',
  deleteDeployments: 'DELETE FROM deployments WHERE web_app_id = ?',
  deleteApp: 'DELETE FROM web_apps WHERE id = ?',
  unfinished: `SELECT * FROM deployments WHERE status IN ('queued', 'building', 'starting') ORDER BY rowid`,
  active: `SELECT * FROM deployments WHERE status = 'active'`,
  heartbeat: `UPDATE deployments SET heartbeat_at = ? WHERE owner = ? AND status IN ('queued', 'building', 'starting')`,
  insertLog: 'INSERT INTO deployment_logs (deployment_id, kind, source, message, time) VALUES (?, ?, ?, ?, ?)',
  pruneLogs: 'DELETE FROM deployment_logs WHERE deployment_id = ? AND kind = ? AND id <= (SELECT id FROM deployment_logs WHERE deployment_id = ? AND kind = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
  logsAfter: 'SELECT id, source, message, time FROM deployment_logs WHERE deployment_id = ? AND kind = ? AND id > ? ORDER BY id LIMIT ?',
  lastLogs: 'SELECT source, message, time FROM (SELECT id, source, message, time FROM deployment_logs WHERE deployment_id = ? AND kind = ? ORDER BY id DESC LIMIT ?) AS recent ORDER BY id',
};

/**
 * The Web Apps, their deployments and log rows in the platform store. The proxy's `route` lookups
 * are remembered (one per request otherwise) and forgotten on every write that can change a route:
 * writes go through here.
 */
export class WebAppStore {
  private readonly routes = new Map<string, RouteRow | undefined>();
  /** Counts the starts and ends of writes that can change a route (see `route`). */
  private generation = 0;

  constructor(readonly db: Sql) {}

  /** True when a hosted Backend App or a Web App already uses `subdomain`. */
  async subdomainTaken(subdomain: string): Promise<boolean> {
    return (await this.db.get(SQL.subdomainTaken, subdomain, subdomain)) !== undefined;
  }

  async insertApp(row: Omit<WebAppRow, 'last_deployment_id' | 'active_deployment_id' | 'stopped'>): Promise<void> {
    return this.invalidating(async () => {
      await this.db.run(
        SQL.insertApp,
        row.id, row.account_id, row.app_name, row.subdomain, row.repository_owner_login, row.repository_name, row.branch_name, row.root_dir_path,
        row.environment_variables, row.port, row.health_check_path, row.auto_deploy, row.last_seen_sha, row.created_at, row.replicas,
      );
    });
  }

  /** The Web App `id` when it belongs to `accountId`. */
  async app(accountId: string, id: string): Promise<WebAppRow | undefined> {
    return (await this.db.get(SQL.app, id, accountId)) as WebAppRow | undefined;
  }

  /** The Web App `id`, whoever owns it (Backyard's own housekeeping, never for a caller). */
  async appById(id: string): Promise<WebAppRow | undefined> {
    return (await this.db.get(SQL.appById, id)) as WebAppRow | undefined;
  }

  async appByName(accountId: string, name: string): Promise<WebAppRow | undefined> {
    return (await this.db.get(SQL.appByName, accountId, name)) as WebAppRow | undefined;
  }

  /** An account's Web Apps, oldest first; only the one named exactly `name` when given. */
  async apps(accountId: string, name?: string): Promise<Array<{ id: string; app_name: string }>> {
    return (name === undefined ? (await this.db.all(SQL.apps, accountId)) : (await this.db.all(SQL.appsNamed, accountId, name))) as Array<{ id: string; app_name: string }>;
  }

  /** The proxy's view of the Web App at `subdomain`, or undefined when none is there. */
  async route(subdomain: string): Promise<RouteRow | undefined> {
    if (this.routes.has(subdomain)) return this.routes.get(subdomain);
    const generation = this.generation;
    const row = (await this.db.get(SQL.route, subdomain)) as RouteRow | undefined;
    // A write that began or ended while this read was on its way may have made it stale: not kept then.
    if (generation !== this.generation) return row;
    if (this.routes.size > 10_000) this.routes.clear();
    this.routes.set(subdomain, row);
    return row;
  }

  /**
   * Runs a write that can change a route, forgetting the remembered routes before it and again once
   * it is done, so that a route read while it ran is not kept (reads and writes interleave at awaits).
   */
  private async invalidating<T>(write: () => Promise<T>): Promise<T> {
    this.generation++;
    this.routes.clear();
    try {
      return await write();
    } finally {
      this.generation++;
      this.routes.clear();
    }
  }

  /** Changes the settings given (only those). */
  async updateSettings(id: string, update: SettingsUpdate): Promise<void> {
    return this.invalidating(async () => {
      const columns: Record<string, unknown> = {};
      if (update.branch_name !== undefined) columns.branch_name = update.branch_name;
      if (update.root_dir_path !== undefined) columns.root_dir_path = update.root_dir_path;
      if (update.port !== undefined) columns.port = update.port;
      if (update.health_check_path !== undefined) columns.health_check_path = update.health_check_path;
      if (update.auto_deploy !== undefined) columns.auto_deploy = update.auto_deploy;
      if (update.replicas !== undefined) columns.replicas = update.replicas;
      if (update.variables !== undefined) columns.environment_variables = JSON.stringify(update.variables);
      const names = Object.keys(columns);
      if (names.length === 0) return;
      // Column names come from the fixed list above, never from a caller.
      await this.db.run(`UPDATE web_apps SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE id = ?`, ...names.map((n) => columns[n]), id);
    });
  }

  /** Web Apps with autoDeploy that deploy `owner/repo` at `branch`. */
  async pushTargets(owner: string, repo: string, branch: string): Promise<WebAppRow[]> {
    return (await this.db.all(SQL.pushTargets, owner, repo, branch)) as WebAppRow[];
  }

  /** Every Web App with autoDeploy on. */
  async autoDeployApps(): Promise<WebAppRow[]> {
    return (await this.db.all(SQL.autoDeploy)) as WebAppRow[];
  }

  async setLastSeen(id: string, sha: string): Promise<void> {
    await this.db.run(SQL.lastSeen, sha, id);
  }

  async account(id: string): Promise<Account | undefined> {
    const row = (await this.db.get(SQL.account, id)) as { id: string; login: string; created_at: string } | undefined;
    return row && { id: row.id, login: row.login, createdAt: row.created_at };
  }

  /** Adds a queued deployment and makes it the app's last one. */
  async insertDeployment(row: Pick<DeploymentRow, 'id' | 'web_app_id' | 'trigger' | 'owner' | 'created_at'>): Promise<void> {
    return this.invalidating(async () => {
      await this.db.transaction(async () => {
        await this.db.run(SQL.insertDeployment, row.id, row.web_app_id, row.trigger, row.owner, row.created_at, row.created_at);
        await this.db.run(SQL.setLast, row.id, row.web_app_id);
      });
    });
  }

  /** The deployment `id` when it belongs to the Web App `webAppId`. */
  async deployment(webAppId: string, id: string): Promise<DeploymentRow | undefined> {
    return (await this.db.get(SQL.deployment, id, webAppId)) as DeploymentRow | undefined;
  }

  async deploymentById(id: string | null): Promise<DeploymentRow | undefined> {
    return id === null ? undefined : ((await this.db.get(SQL.deploymentById, id)) as DeploymentRow | undefined);
  }

  /** The newest `limit` deployments of the Web App `webAppId`, newest first. */
  async deployments(webAppId: string, limit: number): Promise<DeploymentRow[]> {
    return (await this.db.all(SQL.deployments, webAppId, limit)) as DeploymentRow[];
  }

  /** True when the app has a deployment created after `id`. */
  async hasNewer(webAppId: string, id: string): Promise<boolean> {
    return (await this.db.get(SQL.newer, webAppId, id)) !== undefined;
  }

  /** Moves an unfinished deployment to `building` or `starting`. @returns false when it was already finished. */
  async setStatus(id: string, status: 'building' | 'starting', now: string): Promise<boolean> {
    return this.invalidating(async () => {
      return (await this.db.run(SQL.status, status, now, id)).changes > 0;
    });
  }

  async setCommit(id: string, sha: string): Promise<void> {
    await this.db.run(SQL.commit, sha, id);
  }

  async setImage(id: string, imageId: string): Promise<void> {
    await this.db.run(SQL.image, imageId, id);
  }

  async setPorts(id: string, containerPort: number, hostPort: number | null): Promise<void> {
    return this.invalidating(async () => {
      await this.db.run(SQL.ports, containerPort, hostPort, id);
    });
  }

  /** Marks a deployment as running as a swarm service's tasks on `containerPort` (no host port: tasks are reached on the reach network, swarm.ts). */
  async setService(id: string, containerPort: number): Promise<void> {
    return this.invalidating(async () => {
      await this.db.run(SQL.service, 1, containerPort, id);
    });
  }

  async setHostPort(id: string, hostPort: number | null): Promise<void> {
    return this.invalidating(async () => {
      await this.db.run(SQL.hostPort, hostPort, id);
    });
  }

  /** Ends an unfinished deployment as `failed` (with `error`) or `superseded`. @returns false when it was already finished. */
  async finish(id: string, status: 'failed' | 'superseded', error: string, now: string): Promise<boolean> {
    return this.invalidating(async () => {
      return (await this.db.run(SQL.finish, status, error, now, id)).changes > 0;
    });
  }

  /**
   * The switch of traffic, in one transaction: the deployment `id` (starting) becomes active and the
   * app's active one, and the one active before becomes superseded.
   * @returns the id of the deployment that was active before, if any; undefined `switched` when `id` was no longer starting.
   */
  async activate(webAppId: string, id: string, now: string): Promise<{ switched: boolean; previous: string | undefined }> {
    return this.invalidating(async () => {
      return await this.db.transaction(async () => {
        if ((await this.db.run(SQL.makeActive, now, id)).changes === 0) return { switched: false, previous: undefined };
        const app = await this.appById(webAppId);
        const previous = app?.active_deployment_id ?? undefined;
        if (previous && previous !== id) await this.db.run(SQL.supersedeActive, now, previous);
        await this.db.run(SQL.setActive, id, webAppId);
        return { switched: true, previous: previous === id ? undefined : previous };
      });
    });
  }

  /** Marks the app stopped (stopWebApp) or not (startWebApp). */
  async setStopped(id: string, stopped: boolean): Promise<void> {
    return this.invalidating(async () => {
      await this.db.run(SQL.setStopped, stopped ? 1 : 0, id);
    });
  }

  /** The app's deployments still queued, building or starting. */
  async unfinishedOf(webAppId: string): Promise<DeploymentRow[]> {
    return (await this.db.all(SQL.unfinishedOf, webAppId)) as DeploymentRow[];
  }

  /** The ids of all the app's deployments. */
  async deploymentIds(webAppId: string): Promise<string[]> {
    return ((await this.db.all(SQL.deploymentIds, webAppId)) as Array<{ id: string }>).map((r) => r.id);
  }

  /** Removes the app, its deployments and their log rows, in one transaction; its subdomain is free then. */
  async deleteApp(webAppId: string): Promise<void> {
    return this.invalidating(async () => {
      await this.db.transaction(async () => {
        await this.db.run(SQL.deleteLogs, webAppId);
        await this.db.run(SQL.deleteDeployments, webAppId);
        await this.db.run(SQL.deleteApp, webAppId);
      });
    });
  }

  /** Every deployment still queued, building or starting, whoever runs it, oldest first. */
  async unfinished(): Promise<DeploymentRow[]> {
    return (await this.db.all(SQL.unfinished)) as DeploymentRow[];
  }

  /** Every active deployment. */
  async activeDeployments(): Promise<DeploymentRow[]> {
    return (await this.db.all(SQL.active)) as DeploymentRow[];
  }

  /** Refreshes the heartbeat of every unfinished deployment of `owner`. */
  async heartbeat(owner: string, now: string): Promise<void> {
    await this.db.run(SQL.heartbeat, now, owner);
  }

  async insertLog(deploymentId: string, kind: LogKind, row: LogRow): Promise<void> {
    await this.db.run(SQL.insertLog, deploymentId, kind, row.source, row.message, row.time);
  }

  /** Several rows in one transaction. */
  async insertLogs(deploymentId: string, kind: LogKind, rows: readonly LogRow[]): Promise<void> {
    await this.db.transaction(async () => {
      for (const row of rows) await this.insertLog(deploymentId, kind, row);
    });
  }

  /** Keeps only the last `keep` rows of one kind (a build that prints without end must not fill the disk). */
  async pruneLogs(deploymentId: string, kind: LogKind, keep: number): Promise<void> {
    await this.db.run(SQL.pruneLogs, deploymentId, kind, deploymentId, kind, keep);
  }

  /** Rows of one kind written after the row `afterId` (0: from the first), at most `limit`, in order, with their ids. */
  async logsAfter(deploymentId: string, kind: LogKind, afterId: number, limit: number): Promise<Array<LogRow & { id: number }>> {
    return (await this.db.all(SQL.logsAfter, deploymentId, kind, afterId, limit)) as Array<LogRow & { id: number }>;
  }

  /** The last `limit` rows of one kind, in time order. */
  async lastLogs(deploymentId: string, kind: LogKind, limit: number): Promise<LogRow[]> {
    return (await this.db.all(SQL.lastLogs, deploymentId, kind, limit)) as LogRow[];
  }
}

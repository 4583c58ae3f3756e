import type { Sql } from '../../shared/sql.js';

/**
 * The rows of development environments and command executions in `platform.db` (migration 3).
 * Plain SQL, no rules: the service decides what may be read and written.
 */

/** Interface A `DevelopmentEnvironment` (spec, "Resources and their fields"). */
export interface DevelopmentEnvironment {
  id: string;
  chatTitle: string;
  /** ISO 8601 in UTC with milliseconds (docs/design.md, decision 1). */
  createdAt: string;
  /** Backyard's address from inside the environment (`http://backyard.internal:<port>`), once known. */
  backyardURL?: string;
}

/**
 * Interface A `CommandExecution`; `exitCode` is absent while `running` (docs/design.md, decision 9), and
 * also when the command could not start at all: then `startError` says why and what to do.
 */
export interface CommandExecution {
  id: string;
  stdout: string;
  stderr: string;
  status: 'running' | 'exited';
  exitCode?: number;
  startError?: string;
}

/**
 * One execution as the dashboard lists it: what ran, its state and when, without its output (read
 * that through `DevEnvService.inspect`). Times are ISO 8601 in UTC with milliseconds; `exitCode` is
 * null while `running`, and `exitedAt` too.
 */
export interface ExecutionSummary {
  id: string;
  command: string;
  status: 'running' | 'exited';
  exitCode: number | null;
  createdAt: string;
  exitedAt: string | null;
}

/** How many executions an environment has, how many are marked running, and its latest one (absent when none ran). */
export interface EnvironmentActivity {
  total: number;
  running: number;
  latest?: ExecutionSummary;
}

export interface EnvironmentRow {
  id: string;
  account_id: string;
  chat_title: string;
  created_at: string;
}

export interface ExecutionRow {
  id: string;
  environment_id: string;
  command: string;
  status: 'running' | 'exited';
  exit_code: number | null;
  /** Why the command never started (migration 7); null when it started. */
  start_error: string | null;
  stdout: string;
  stderr: string;
  /** `<host>/<pid>/<instance>` of the Backyard process that runs it. */
  owner: string;
  /** Refreshed by the owner every few seconds while the execution runs. */
  heartbeat_at: string;
  created_at: string;
  exited_at: string | null;
}

export const environmentOf = (row: EnvironmentRow): DevelopmentEnvironment => ({
  id: row.id,
  chatTitle: row.chat_title,
  createdAt: row.created_at,
});

export const executionOf = (row: ExecutionRow): CommandExecution => ({
  id: row.id,
  stdout: row.stdout,
  stderr: row.stderr,
  status: row.status,
  ...(row.status === 'exited' && row.exit_code !== null ? { exitCode: row.exit_code } : {}),
  ...(row.status === 'exited' && row.start_error !== null ? { startError: row.start_error } : {}),
});

/** The columns of `ExecutionSummary`: lists never load the outputs (up to 1 MiB per stream each). */
type SummaryRow = Pick<ExecutionRow, 'id' | 'command' | 'status' | 'exit_code' | 'created_at' | 'exited_at'>;

const summaryOf = (r: SummaryRow): ExecutionSummary => ({
  id: r.id,
  command: r.command,
  status: r.status,
  exitCode: r.exit_code,
  createdAt: r.created_at,
  exitedAt: r.exited_at,
});

/** The statements over the two tables (the same text on SQLite and PostgreSQL). */
const SQL = {
  insertEnv: 'INSERT INTO development_environments (id, account_id, chat_title, created_at) VALUES (?, ?, ?, ?)',
  env: 'SELECT * FROM development_environments WHERE id = ? AND account_id = ?',
  envById: 'SELECT * FROM development_environments WHERE id = ?',
  envs: 'SELECT * FROM development_environments WHERE account_id = ? ORDER BY created_at, id',
  envsByTitle: 'SELECT * FROM development_environments WHERE account_id = ? AND chat_title = ? ORDER BY created_at, id',
  insertExec: `INSERT INTO command_executions (id, environment_id, command, status, owner, heartbeat_at, created_at)
     VALUES (?, ?, ?, 'running', ?, ?, ?)`,
  exec: 'SELECT * FROM command_executions WHERE id = ? AND environment_id = ?',
  // rowid breaks ties between executions started in the same millisecond: the later insert is newer.
  summaries: `SELECT id, command, status, exit_code, created_at, exited_at FROM command_executions
      WHERE environment_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
  summary: 'SELECT id, command, status, exit_code, created_at, exited_at FROM command_executions WHERE id = ? AND environment_id = ?',
  counts: `SELECT COUNT(*) AS total, SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END) AS running FROM command_executions WHERE environment_id = ?`,
  output: "UPDATE command_executions SET stdout = ?, stderr = ?, heartbeat_at = ? WHERE id = ? AND status = 'running'",
  exited: "UPDATE command_executions SET status = 'exited', exit_code = ?, start_error = ?, stdout = ?, stderr = ?, exited_at = ? WHERE id = ? AND status = 'running'",
  interrupted: `UPDATE command_executions SET status = 'exited', exit_code = ?,
       stderr = stderr || CASE WHEN stderr = '' OR substr(stderr, length(stderr), 1) = ? THEN '' ELSE ? END || ?,
       exited_at = ?
     WHERE id = ? AND status = 'running'`,
  heartbeat: "UPDATE command_executions SET heartbeat_at = ? WHERE owner = ? AND status = 'running'",
  running: "SELECT * FROM command_executions WHERE status = 'running'",
};

/** The development environments and their command executions in the platform store. */
export class DevEnvStore {
  constructor(private readonly db: Sql) {}

  /** Removes an environment and its command executions, in one transaction. */
  async deleteEnvironment(id: string): Promise<void> {
    await this.db.transaction(async () => {
      await this.db.run('DELETE FROM command_executions WHERE environment_id = ?', id);
      await this.db.run('DELETE FROM development_environments WHERE id = ?', id);
    });
  }

  async insertEnvironment(row: EnvironmentRow): Promise<void> {
    await this.db.run(SQL.insertEnv, row.id, row.account_id, row.chat_title, row.created_at);
  }

  /** The environment `id` when it belongs to `accountId`. */
  async environment(accountId: string, id: string): Promise<EnvironmentRow | undefined> {
    return (await this.db.get(SQL.env, id, accountId)) as EnvironmentRow | undefined;
  }

  /** The environment `id`, whoever owns it (for Backyard's own housekeeping, never for a caller). */
  async environmentById(id: string): Promise<EnvironmentRow | undefined> {
    return (await this.db.get(SQL.envById, id)) as EnvironmentRow | undefined;
  }

  /** An account's environments, oldest first, optionally only those titled exactly `chatTitle`. */
  async environments(accountId: string, chatTitle?: string): Promise<EnvironmentRow[]> {
    return (chatTitle === undefined ? (await this.db.all(SQL.envs, accountId)) : (await this.db.all(SQL.envsByTitle, accountId, chatTitle))) as EnvironmentRow[];
  }

  async insertExecution(row: Pick<ExecutionRow, 'id' | 'environment_id' | 'command' | 'owner' | 'created_at'>): Promise<void> {
    await this.db.run(SQL.insertExec, row.id, row.environment_id, row.command, row.owner, row.created_at, row.created_at);
  }

  /** The execution `id` when it belongs to the environment `environmentId`. */
  async execution(environmentId: string, id: string): Promise<ExecutionRow | undefined> {
    return (await this.db.get(SQL.exec, id, environmentId)) as ExecutionRow | undefined;
  }

  /** The newest `limit` executions of the environment `environmentId`, newest first, without their output. */
  async executionSummaries(environmentId: string, limit: number): Promise<ExecutionSummary[]> {
    return ((await this.db.all(SQL.summaries, environmentId, limit)) as SummaryRow[]).map(summaryOf);
  }

  /** The execution `id` of the environment `environmentId`, without its output. */
  async executionSummary(environmentId: string, id: string): Promise<ExecutionSummary | undefined> {
    const row = (await this.db.get(SQL.summary, id, environmentId)) as SummaryRow | undefined;
    return row && summaryOf(row);
  }

  /** How many executions the environment `environmentId` has, and how many are marked running. */
  async executionCounts(environmentId: string): Promise<{ total: number; running: number }> {
    // SUM over no rows is NULL.
    const counts = (await this.db.get(SQL.counts, environmentId)) as { total: number; running: number | null };
    return { total: counts.total, running: counts.running ?? 0 };
  }

  /** Output so far of a running execution (also refreshes its heartbeat). */
  async writeOutput(id: string, stdout: string, stderr: string, now: string): Promise<void> {
    await this.db.run(SQL.output, stdout, stderr, now, id);
  }

  /**
   * Marks a running execution exited with its final output; `exitCode` null and `startError` set for
   * a command that never started. No effect on one already exited.
   */
  async writeExited(id: string, outcome: { exitCode: number | null; startError?: string }, stdout: string, stderr: string, now: string): Promise<void> {
    await this.db.run(SQL.exited, outcome.exitCode, outcome.startError ?? null, stdout, stderr, now, id);
  }

  /** Marks a running execution exited with `note` appended to its stderr. No effect on one already exited. */
  async writeInterrupted(id: string, exitCode: number, note: string, now: string): Promise<boolean> {
    return (await this.db.run(SQL.interrupted, exitCode, '\n', '\n', note, now, id)).changes > 0;
  }

  /** Refreshes the heartbeat of every running execution of `owner`. */
  async heartbeat(owner: string, now: string): Promise<void> {
    await this.db.run(SQL.heartbeat, now, owner);
  }

  /** Every execution still marked running, whoever runs it. */
  async runningExecutions(): Promise<ExecutionRow[]> {
    return (await this.db.all(SQL.running)) as ExecutionRow[];
  }
}

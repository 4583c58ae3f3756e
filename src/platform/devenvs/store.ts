import type { Db } from '../../shared/sqlite.js';

/**
 * The rows of development environments and command executions in `platform.db` (migration 3).
 * Plain SQL, no rules: the service decides what may be read and written.
 */

/** Interface A `DevelopmentEnvironment` (spec, "Resources and their fields"). */
export interface DevelopmentEnvironment {
  id: string;
  chatTitle: string;
  /** ISO 8601 in UTC with milliseconds (design.md, decision 1). */
  createdAt: string;
  /** Backyard's address from inside the environment (`http://backyard.internal:<port>`), once known. */
  backyardURL?: string;
}

/**
 * Interface A `CommandExecution`; `exitCode` is absent while `running` (design.md, decision 9), and
 * also when the command could not start at all: then `startError` says why and what to do (issue 12).
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

/** Prepared statements over the two tables. */
export class DevEnvStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insertEnv: db.prepare('INSERT INTO development_environments (id, account_id, chat_title, created_at) VALUES (?, ?, ?, ?)'),
      env: db.prepare('SELECT * FROM development_environments WHERE id = ? AND account_id = ?'),
      envById: db.prepare('SELECT * FROM development_environments WHERE id = ?'),
      envs: db.prepare('SELECT * FROM development_environments WHERE account_id = ? ORDER BY created_at, id'),
      envsByTitle: db.prepare('SELECT * FROM development_environments WHERE account_id = ? AND chat_title = ? ORDER BY created_at, id'),
      insertExec: db.prepare(
        `INSERT INTO command_executions (id, environment_id, command, status, owner, heartbeat_at, created_at)
         VALUES (?, ?, ?, 'running', ?, ?, ?)`,
      ),
      exec: db.prepare('SELECT * FROM command_executions WHERE id = ? AND environment_id = ?'),
      // rowid breaks ties between executions started in the same millisecond: the later insert is newer.
      summaries: db.prepare(
        `SELECT id, command, status, exit_code, created_at, exited_at FROM command_executions
          WHERE environment_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      ),
      summary: db.prepare('SELECT id, command, status, exit_code, created_at, exited_at FROM command_executions WHERE id = ? AND environment_id = ?'),
      counts: db.prepare(`SELECT COUNT(*) AS total, SUM(status = 'running') AS running FROM command_executions WHERE environment_id = ?`),
      output: db.prepare("UPDATE command_executions SET stdout = ?, stderr = ?, heartbeat_at = ? WHERE id = ? AND status = 'running'"),
      exited: db.prepare(
        "UPDATE command_executions SET status = 'exited', exit_code = ?, start_error = ?, stdout = ?, stderr = ?, exited_at = ? WHERE id = ? AND status = 'running'",
      ),
      interrupted: db.prepare(
        `UPDATE command_executions SET status = 'exited', exit_code = ?,
           stderr = stderr || CASE WHEN stderr = '' OR substr(stderr, -1) = char(10) THEN '' ELSE char(10) END || ?,
           exited_at = ?
         WHERE id = ? AND status = 'running'`,
      ),
      heartbeat: db.prepare("UPDATE command_executions SET heartbeat_at = ? WHERE owner = ? AND status = 'running'"),
      running: db.prepare("SELECT * FROM command_executions WHERE status = 'running'"),
    };
  }

  /** Removes an environment and its command executions, in one transaction. */
  deleteEnvironment(id: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM command_executions WHERE environment_id = ?').run(id);
      this.db.prepare('DELETE FROM development_environments WHERE id = ?').run(id);
    }).immediate();
  }

  insertEnvironment(row: EnvironmentRow): void {
    this.stmts.insertEnv.run(row.id, row.account_id, row.chat_title, row.created_at);
  }

  /** The environment `id` when it belongs to `accountId`. */
  environment(accountId: string, id: string): EnvironmentRow | undefined {
    return this.stmts.env.get(id, accountId) as EnvironmentRow | undefined;
  }

  /** The environment `id`, whoever owns it (for Backyard's own housekeeping, never for a caller). */
  environmentById(id: string): EnvironmentRow | undefined {
    return this.stmts.envById.get(id) as EnvironmentRow | undefined;
  }

  /** An account's environments, oldest first, optionally only those titled exactly `chatTitle`. */
  environments(accountId: string, chatTitle?: string): EnvironmentRow[] {
    return (chatTitle === undefined ? this.stmts.envs.all(accountId) : this.stmts.envsByTitle.all(accountId, chatTitle)) as EnvironmentRow[];
  }

  insertExecution(row: Pick<ExecutionRow, 'id' | 'environment_id' | 'command' | 'owner' | 'created_at'>): void {
    this.stmts.insertExec.run(row.id, row.environment_id, row.command, row.owner, row.created_at, row.created_at);
  }

  /** The execution `id` when it belongs to the environment `environmentId`. */
  execution(environmentId: string, id: string): ExecutionRow | undefined {
    return this.stmts.exec.get(id, environmentId) as ExecutionRow | undefined;
  }

  /** The newest `limit` executions of the environment `environmentId`, newest first, without their output. */
  executionSummaries(environmentId: string, limit: number): ExecutionSummary[] {
    return (this.stmts.summaries.all(environmentId, limit) as SummaryRow[]).map(summaryOf);
  }

  /** The execution `id` of the environment `environmentId`, without its output. */
  executionSummary(environmentId: string, id: string): ExecutionSummary | undefined {
    const row = this.stmts.summary.get(id, environmentId) as SummaryRow | undefined;
    return row && summaryOf(row);
  }

  /** How many executions the environment `environmentId` has, and how many are marked running. */
  executionCounts(environmentId: string): { total: number; running: number } {
    // SUM over no rows is NULL.
    const counts = this.stmts.counts.get(environmentId) as { total: number; running: number | null };
    return { total: counts.total, running: counts.running ?? 0 };
  }

  /** Output so far of a running execution (also refreshes its heartbeat). */
  writeOutput(id: string, stdout: string, stderr: string, now: string): void {
    this.stmts.output.run(stdout, stderr, now, id);
  }

  /**
   * Marks a running execution exited with its final output; `exitCode` null and `startError` set for
   * a command that never started. No effect on one already exited.
   */
  writeExited(id: string, outcome: { exitCode: number | null; startError?: string }, stdout: string, stderr: string, now: string): void {
    this.stmts.exited.run(outcome.exitCode, outcome.startError ?? null, stdout, stderr, now, id);
  }

  /** Marks a running execution exited with `note` appended to its stderr. No effect on one already exited. */
  writeInterrupted(id: string, exitCode: number, note: string, now: string): boolean {
    return this.stmts.interrupted.run(exitCode, note, now, id).changes > 0;
  }

  /** Refreshes the heartbeat of every running execution of `owner`. */
  heartbeat(owner: string, now: string): void {
    this.stmts.heartbeat.run(now, owner);
  }

  /** Every execution still marked running, whoever runs it. */
  runningExecutions(): ExecutionRow[] {
    return this.stmts.running.all() as ExecutionRow[];
  }
}

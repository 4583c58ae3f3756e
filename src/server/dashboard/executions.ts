import type { Db } from '../../platform/store/db.js';

/**
 * A read-only view of the command executions of development environments for the dashboard's
 * lists (the development environment service has no listing of them). Plain SQL over the rows of
 * migration 3; callers check first that the environment is the session's own (through
 * `DevEnvService.list`), and read one execution's state and output through `DevEnvService.inspect`,
 * which also settles executions whose Backyard went away.
 */

/** One execution in a list: what ran, its state, and when. */
export interface ExecutionSummary {
  id: string;
  command: string;
  status: 'running' | 'exited';
  exitCode: number | null;
  createdAt: string;
  exitedAt: string | null;
}

/** Counts of an environment's executions, and its latest one. */
export interface EnvironmentActivity {
  total: number;
  running: number;
  latest?: ExecutionSummary;
}

interface Row {
  id: string;
  command: string;
  status: 'running' | 'exited';
  exit_code: number | null;
  created_at: string;
  exited_at: string | null;
}

const toSummary = (r: Row): ExecutionSummary => ({
  id: r.id,
  command: r.command,
  status: r.status,
  exitCode: r.exit_code,
  createdAt: r.created_at,
  exitedAt: r.exited_at,
});

/** The newest `limit` executions of an environment, newest first. */
export function executionsOf(db: Db, environmentId: string, limit = 200): ExecutionSummary[] {
  const rows = db
    .prepare(
      `SELECT id, command, status, exit_code, created_at, exited_at FROM command_executions
        WHERE environment_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    )
    .all(environmentId, limit) as Row[];
  return rows.map(toSummary);
}

/** How many executions an environment has, how many run, and its latest. */
export function activityOf(db: Db, environmentId: string): EnvironmentActivity {
  const counts = db
    .prepare(`SELECT COUNT(*) AS total, SUM(status = 'running') AS running FROM command_executions WHERE environment_id = ?`)
    .get(environmentId) as { total: number; running: number | null };
  const [latest] = executionsOf(db, environmentId, 1);
  return { total: counts.total, running: counts.running ?? 0, ...(latest ? { latest } : {}) };
}

/** One execution of an environment, or undefined when the environment has no such execution. */
export function executionSummary(db: Db, environmentId: string, executionId: string): ExecutionSummary | undefined {
  const row = db
    .prepare('SELECT id, command, status, exit_code, created_at, exited_at FROM command_executions WHERE environment_id = ? AND id = ?')
    .get(environmentId, executionId) as Row | undefined;
  return row && toSummary(row);
}

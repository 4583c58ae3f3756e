import os from 'node:os';
import { randomAlphanumeric } from '../../shared/ids.js';

/**
 * Which Backyard process runs an execution, and whether that process is gone (an
 * execution whose Backyard stopped must not read `running` forever). Several processes may open one
 * home (a server, `backyard mcp`, a short CLI command), so a row marked running is taken as orphaned
 * only when its owner is provably gone or has been silent for too long.
 */

/** How often an owner refreshes the heartbeat of its running executions, in milliseconds. */
export const HEARTBEAT_MS = 5_000;
/** A heartbeat older than this means the owner is gone, wherever it ran. */
export const STALE_MS = 30_000;

/** A new owner id for this process: `<host>/<pid>/<random>`. */
export const newOwner = (): string => `${os.hostname()}/${process.pid}/${randomAlphanumeric(8)}`;

/**
 * True when the execution's `owner` can no longer be following it: it is `me` (this service, which
 * no longer follows it), an earlier Backyard in this same process, a process of this host that has
 * exited, or an owner whose heartbeat is older than `STALE_MS`.
 */
export function ownerGone(owner: string, heartbeatAt: string, me: string, now = Date.now()): boolean {
  if (owner === me) return true;
  const [host, pidText] = owner.split('/');
  if (host === os.hostname()) {
    const pid = Number(pidText);
    if (pid === process.pid) return true;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    }
  }
  return now - Date.parse(heartbeatAt) > STALE_MS;
}

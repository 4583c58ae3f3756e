import { notFound } from '../../errors.js';
import type { WebAppStore, DeploymentRow } from './store.js';
import { UNFINISHED } from './store.js';

/** How long a call follows a deployment before it answers how far it got (MCP clients time out at about a minute). */
export const FOLLOW_LIMIT_MS = 50_000;

/** How often the deployment's row and build log are read while following it. */
const POLL_MS = 250;

/** What one progress message says of a build log row: its text, at most 300 characters. */
const logLine = (message: string) => (message.length > 300 ? `${message.slice(0, 300)}…` : message);

/**
 * Follows a deployment for a caller that listens to progress: reports each status it
 * reaches (queued, building, starting, active or failed, with the error) and each build log row
 * (clone, build steps), until it has finished, `signal` aborts (MCP cancellation) or `limitMs`
 * passes. Reads the store, so it sees deployments run by any Backyard process on the home.
 * @returns the deployment's row as it was last read; the deployment itself goes on either way.
 * @throws ManagementError(notFound) when the app is deleted while it is followed.
 */
export async function followDeployment(
  store: WebAppStore,
  appId: string,
  deploymentId: string,
  report: (message: string) => void,
  signal?: AbortSignal,
  limitMs = FOLLOW_LIMIT_MS,
): Promise<DeploymentRow> {
  const deadline = Date.now() + limitMs;
  let status: string | undefined;
  let lastLogId = 0;
  for (;;) {
    const row = await store.deployment(appId, deploymentId);
    if (!row) throw notFound(`The deployment "${deploymentId}" is gone: its Web App was deleted while the deployment was followed.`);
    for (const log of await store.logsAfter(deploymentId, 'build', lastLogId, 100)) {
      lastLogId = log.id;
      report(`Build: ${logLine(log.message)}`);
    }
    if (row.status !== status) {
      status = row.status;
      report(`Deployment ${row.status}${row.error ? `: ${row.error}` : ''}.`);
    }
    if (!UNFINISHED.includes(row.status) || signal?.aborted || Date.now() >= deadline) return row;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, POLL_MS);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

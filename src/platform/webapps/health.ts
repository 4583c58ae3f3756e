import http from 'node:http';
import { DeployError } from './engine.js';
import type { ContainerState } from './runner.js';

/** One health check request: the status code, or why there was none. */
export type ProbeResult = { status: number } | { error: string };

/**
 * `GET http://127.0.0.1:<hostPort><path>` (loopback only: docs/notes/docker.md), no redirects
 * followed, one fresh connection, at most `timeoutMs`.
 */
export function probe(hostPort: number, path: string, timeoutMs: number): Promise<ProbeResult> {
  return probeAt('127.0.0.1', hostPort, path, timeoutMs);
}

/**
 * `GET http://<ip>:<port><path>`, as `probe`, at an address of this machine's own: a published
 * loopback port, or a swarm task's address on the home's reach network (swarm.ts).
 */
export function probeAt(ip: string, port: number, path: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = http.get({ host: ip, port, path, agent: false, timeout: timeoutMs, headers: { 'user-agent': 'backyard-health-check' } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code === 'ECONNREFUSED' ? 'the connection was refused' : error.code === 'ECONNRESET' ? 'the connection was reset' : error.message }),
    );
  });
}

/** A 2xx or 3xx answer passes. */
export const healthy = (result: ProbeResult): boolean => 'status' in result && result.status >= 200 && result.status < 400;

export interface HealthWait {
  /** The path to ask, e.g. `/` or `/health`. */
  path: string;
  /** The port inside the container, for messages. */
  port: number;
  timeoutMs: number;
  /** The container's current state (and published port). */
  state: () => Promise<ContainerState>;
  signal?: AbortSignal;
  /** Pause between two probes during the first `fastMs`; then it doubles up to `maxIntervalMs`. */
  intervalMs?: number;
  fastMs?: number;
  maxIntervalMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the container answers `path` with 2xx or 3xx, probing every 20 ms
 * for the first 3 s (most apps start within that), then less and less often up to every 500 ms, and
 * checking that the container still runs about every second.
 * @returns the loopback port it answered on.
 * @throws DeployError saying the container exited (with its exit code, or that it ran out of
 *   memory), or that it did not answer in time and what the last probe saw.
 */
export async function waitHealthy(wait: HealthWait): Promise<number> {
  const deadline = Date.now() + wait.timeoutMs;
  let interval = wait.intervalMs ?? 20;
  const fastUntil = Date.now() + (wait.fastMs ?? 3000);
  const maxInterval = wait.maxIntervalMs ?? 500;
  let last = 'it did not answer yet';
  let checked = 0;
  let hostPort: number | undefined;
  for (;;) {
    if (wait.signal?.aborted) throw new DeployError('Backyard stopped while the container was starting.');
    if (hostPort === undefined || Date.now() - checked >= 1000) {
      const state = await wait.state();
      checked = Date.now();
      if (!state.running || state.restartCount > 0) {
        const why = state.oomKilled ? 'ran out of memory (BACKYARD_WEBAPP_MEMORY_MB)' : `exited with code ${state.exitCode}`;
        throw new DeployError(`the container ${why} before it answered the health check at ${wait.path}. The container logs show what it printed.`);
      }
      hostPort = state.hostPort;
      if (hostPort === undefined) throw new DeployError(`the engine published no loopback port for the container port ${wait.port}.`);
    }
    const remaining = deadline - Date.now();
    const result = await probe(hostPort, wait.path, Math.max(100, Math.min(2000, remaining)));
    if (healthy(result)) return hostPort;
    last = 'status' in result ? `it answered status ${result.status}` : result.error;
    if (Date.now() + interval >= deadline) break;
    await sleep(interval);
    if (Date.now() > fastUntil) interval = Math.min(maxInterval, interval * 2);
  }
  throw new DeployError(
    `the health check did not pass: GET ${wait.path} on port ${wait.port} got no 2xx or 3xx answer within ${Math.round(wait.timeoutMs / 1000)} s (last try: ${last}). ` +
      `Check that the app listens on 0.0.0.0:${wait.port} (set port to the port it uses) and that ${wait.path} answers 2xx (or set healthCheckPath); the container logs show what it printed.`,
  );
}

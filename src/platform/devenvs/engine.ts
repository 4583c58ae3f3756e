import Docker from 'dockerode';
import { ManagementError, unavailable } from '../../errors.js';

/**
 * The Docker engine connection of development environments: one dockerode client per platform,
 * the errors it can raise turned into ManagementErrors with texts for the caller, and the time-out
 * that every wait on the engine carries (style.md, example 12).
 */
export type DockerClient = Docker;

/** Time-outs of single engine requests, in milliseconds. Streams (exec output, pulls) have their own. */
export const ENGINE_TIMEOUTS = {
  /** inspect, list, exec create/start, signal execs */
  request: 30_000,
  /** container and volume create, start, remove */
  lifecycle: 60_000,
  /** an image pull, the whole of it */
  pull: 600_000,
} as const;

/**
 * A dockerode client for `dockerHost` (`DOCKER_HOST` syntax: `unix:///path`, `npipe://…`,
 * `tcp://host:port`, `ssh://user@host`); undefined means the default local socket, as the docker CLI.
 * Makes no connection: an engine that is down is noticed by the first call.
 * @throws Error when `dockerHost` is not a URL (config validation normally catches this first).
 */
export function dockerClient(dockerHost: string | undefined): Docker {
  if (!dockerHost) return new Docker();
  if (dockerHost.startsWith('unix://')) return new Docker({ socketPath: dockerHost.slice('unix://'.length), host: undefined });
  if (dockerHost.startsWith('npipe://')) return new Docker({ socketPath: dockerHost.slice('npipe://'.length), host: undefined });
  const url = new URL(dockerHost);
  const protocol = url.protocol === 'ssh:' ? 'ssh' : url.protocol === 'https:' || url.port === '2376' ? 'https' : 'http';
  return new Docker({
    host: url.hostname,
    port: url.port || (protocol === 'https' ? 2376 : protocol === 'ssh' ? 22 : 2375),
    protocol,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
  });
}

/** Where the engine is expected, for messages. */
export const engineAddress = (dockerHost: string | undefined) => dockerHost ?? 'unix:///var/run/docker.sock';

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'EPERM',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** True when `error` says the engine could not be reached at all (socket missing, refused, denied). */
export function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}

/** The HTTP status the engine answered with, when it answered. */
export const engineStatus = (error: unknown): number | undefined => {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
};

/** The engine's own message for a refused request (`{"message": …}` in its JSON answer). */
export function engineMessage(error: unknown): string {
  const e = error as { json?: { message?: unknown } | string | null; reason?: unknown; message?: unknown } | null;
  if (e?.json && typeof e.json === 'object' && typeof e.json.message === 'string') return e.json.message;
  if (typeof e?.json === 'string' && e.json.trim()) return e.json.trim();
  if (typeof e?.reason === 'string') return e.reason;
  return typeof e?.message === 'string' ? e.message : String(error);
}

/**
 * The text of every "Docker is not reachable" answer: what failed and how to
 * start an engine. Backyard keeps serving everything else meanwhile.
 */
export function notReachableText(dockerHost: string | undefined, error?: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const why = typeof code === 'string' ? ` (${code})` : '';
  return (
    `Docker is not reachable at ${engineAddress(dockerHost)}${why}, so development environments cannot run. ` +
    'Start the Docker engine on the Backyard machine (Docker Desktop, `sudo systemctl start docker`, or `dockerd &` as root; ' +
    'on Debian, `apt-get install docker.io` installs it) or point DOCKER_HOST at a running engine, then try again. Other Backyard tools keep working.'
  );
}

/**
 * Turns a failure of an engine call into what the caller sees: unreachable → 500 "Docker is not
 * reachable"; refused by the engine → 500 naming what failed and the engine's reason; a
 * ManagementError passes through. Anything else is returned as is (an internal error).
 */
export function engineFailure(error: unknown, doing: string, dockerHost: string | undefined): unknown {
  if (error instanceof ManagementError) return error;
  if (isUnreachable(error)) return unavailable(notReachableText(dockerHost, error));
  if (engineStatus(error) !== undefined) {
    return unavailable(`The Docker engine could not ${doing}: ${engineMessage(error)}. Try again; if it keeps failing, check the engine (docker info).`);
  }
  return error;
}

/**
 * Waits for `promise` at most `ms` milliseconds (every wait on the engine has one: style.md, example 12).
 * @throws ManagementError(unavailable) "did not answer within" when the time runs out; the request itself
 *   is aborted through `controller` when one is given.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, doing: string, controller?: AbortController): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller?.abort();
      reject(unavailable(`The Docker engine did not answer within ${Math.round(ms / 1000)} s while trying to ${doing}. Check the engine (docker info) and try again.`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs one engine call with a time-out and the error mapping above: the common wrapper of every
 * request Backyard makes to Docker.
 * @throws ManagementError(unavailable) when the engine is unreachable, refuses or is too slow.
 */
export async function engineCall<T>(
  dockerHost: string | undefined,
  doing: string,
  ms: number,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  try {
    return await withTimeout(call(controller.signal), ms, doing, controller);
  } catch (error) {
    throw engineFailure(error, doing, dockerHost);
  }
}

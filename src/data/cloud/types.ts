/**
 * What the data API asks of an app's cloud code: the names it registered, and calls
 * into its worker. Implemented by the cloud code runtime; the data API knows nothing of processes.
 */
import type { CloudRun } from './runs.js';

export type { CloudLogLevel, CloudRun, CloudRunKind, CloudRunLine, CloudRunStatus } from './runs.js';

export type TriggerName =
  | 'beforeSave'
  | 'afterSave'
  | 'beforeDelete'
  | 'afterDelete'
  | 'beforeFind'
  | 'afterFind'
  | 'beforeLogin'
  | 'afterLogin'
  | 'beforeSubscribe'
  | 'afterLiveQueryEvent'
  /** Registered under the class `@LiveQuery` (LIVE_QUERY_CLASS). */
  | 'onLiveQueryEvent';

/** The pseudo class `Parse.Cloud.onLiveQueryEvent` is registered under. */
export const LIVE_QUERY_CLASS = '@LiveQuery';

/** What an app's `cloud/main.js` registered when it was loaded. */
export interface CloudRegistry {
  functions: string[];
  jobs: string[];
  /** className → trigger names registered for it (`_User` for login triggers). */
  triggers: Record<string, TriggerName[]>;
}

export const EMPTY_REGISTRY: CloudRegistry = { functions: [], jobs: [], triggers: {} };

/** The caller as cloud code sees it (Parse's `request.user`, `request.master`, ...). */
export interface CloudCaller {
  master: boolean;
  /** The user's object as the data API answers it, with `sessionToken`. */
  user?: Record<string, unknown>;
  installationId?: string;
}

/** The cloud code of all apps, as the data API and the deploy operation use it. */
/**
 * The new code of an app threw while it loaded (`reload`): it is live all the same, so the app's
 * functions, jobs and triggers answer 141 with `loadError` until a deploy that loads.
 */
export class CloudLoadError extends Error {
  override name = 'CloudLoadError';
  constructor(
    /** What threw and where: `cloud/tools/x.js:2:7: Error: …` (worker.cts). */
    readonly loadError: string,
  ) {
    super(`the new cloud code failed to load: ${loadError}`);
  }
}

export interface CloudRuntime {
  /** What the app's cloud code registered (loads its worker if needed). */
  registry(appId: string): Promise<CloudRegistry>;
  /**
   * The registry when it is known without waiting: the live worker's, or the empty one when the app
   * has no `cloud/main.js` and no worker. Undefined while a worker starts or must be started; then
   * call `registry`. Lets each data API call skip a wait when nothing needs one.
   */
  registryNow(appId: string): CloudRegistry | undefined;
  /**
   * Runs a function, a trigger or a job in the app's worker.
   * @throws ParseError 141 when the code throws, times out or its worker crashes; a ParseError the
   *   code threw (e.g. `new Parse.Error(142, ...)`) keeps its code.
   */
  run(appId: string, kind: 'function' | 'trigger' | 'job', name: string, request: Record<string, unknown>): Promise<unknown>;
  /**
   * Loads the app's current cloud code in a new worker and retires the old one after its calls finish.
   * @throws Error naming the load error when the new code fails to load (its calls then answer 141).
   */
  reload(appId: string): Promise<void>;
  /**
   * The app's recent function, trigger and job runs with their console output, newest first (see
   * `RUN_LIMITS` in runs.ts for how many). Held in memory: empty after a restart. Never throws; an
   * unknown app has none.
   */
  recentRuns(appId: string): CloudRun[];
  /**
   * Serves the data API requests of sandboxed workers with `handler` (called with the target below
   * `/data`, as the HTTP front's data handler); until then they answer 503.
   */
  /** How many worker processes the app has running now (0 before its first call and once idle). */
  liveWorkers(appId: string): number;
  /** How workers are confined (BACKYARD_CLOUD_CONFINEMENT), and why not in the sandbox when not. */
  confinement(): { mode: 'sandbox' | 'none'; why?: string };
  /**
   * Stops the app's workers at once (primary and spares; calls still running on them fail with 141)
   * and forgets them: for an app being deleted. A later call starts a worker again only if the app
   * still exists.
   */
  forget(appId: string): Promise<void>;
  attachDataApi(handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, target: string) => void): void;
  close(): Promise<void>;
}

import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { homePaths } from '../../config.js';
import { packageRoot } from '../../packageRoot.js';
import type { Logger } from '../../log.js';
import type { AppDirectory } from '../apps.js';
import { ParseCode, ParseError } from '../errors.js';
import { RUN_LIMITS, RunHistory } from './runs.js';
import { DATA_SOCKET, EGRESS_SOCKET, SandboxSockets, sandboxArgv, sandboxUnavailable, type ConfinementMode, type SandboxDataHandler } from './sandbox.js';
import { CloudLoadError, EMPTY_REGISTRY, type CloudRegistry, type CloudRun, type CloudRuntime } from './types.js';
import { Worker } from './workerProcess.js';

/**
 * The compiled worker: beside this module in `dist/`, or in `dist/` when this module runs from its
 * TypeScript source (tests), which `npm test` builds first.
 */
const WORKER_SCRIPT = [path.join(path.dirname(fileURLToPath(import.meta.url)), 'worker.cjs'), path.join(packageRoot(), 'dist', 'src', 'data', 'cloud', 'worker.cjs')].find(
  (f) => fs.existsSync(f),
) ?? 'worker.cjs (run npm run build)';
/** The folder of the `parse` package's dependencies: the worker must be allowed to read it. */
const NODE_MODULES = path.dirname(path.dirname(createRequire(import.meta.url).resolve('parse/node')));

export interface CloudRuntimeOptions {
  home: string;
  directory: AppDirectory;
  /** The data API root, for the SDK inside workers (`http://localhost:4000/data`). */
  dataApiUrl: () => string;
  functionTimeoutMs: number;
  jobTimeoutMs: number;
  memoryMb: number;
  /**
   * `cloud/main.js` texts whose registry is known without running them (the template of new apps):
   * data API calls of such an app need no worker; a call of one of its functions still starts one.
   */
  knownRegistries?: ReadonlyMap<string, CloudRegistry>;
  /** BACKYARD_CLOUD_IDLE_MS: a worker without calls this long is stopped (the next call starts one). */
  idleMs: number;
  /**
   * BACKYARD_CLOUD_CONFINEMENT: `auto` (the sandbox when it can be made; without one, cloud code runs
   * only in a home of one account), `sandbox` (only in the sandbox), `none` (never in it).
   */
  confinement: 'auto' | 'sandbox' | 'none';
  /**
   * How many accounts the home has (the platform's accounts): with `auto` and no sandbox, cloud code
   * runs unconfined only while there is one, the single-user install, where it can reach nobody else's.
   */
  accountCount: () => Promise<number>;
  /** BACKYARD_CLOUD_NETWORK: whether sandboxed code reaches public addresses. */
  network: 'public' | 'none';
  /** BACKYARD_CLOUD_ALLOW_HOSTS: `host:port` pairs reachable although not public. */
  allowHosts: readonly string[];
  log: Logger;
  /** Called with each message a running job reports (`request.message`). */
  onJobMessage?: (appId: string, jobId: string, message: string) => void;
  /**
   * Where an app's cloud tree comes from when this home is not where it is deployed (a data node,
   * BACKYARD_ROLE): `ready` says, without waiting, whether the tree on disk is the active version;
   * `prepare` puts it there. Without it, the tree on disk is the truth.
   */
  trees?: CloudTrees;
}

/** The active version of each app's cloud tree, put in place on this home's disk (see `CloudRuntimeOptions.trees`). */
export interface CloudTrees {
  ready(appId: string): boolean;
  /** @throws Error when the active version cannot be fetched or put in place. */
  prepare(appId: string): Promise<void>;
}

/** The app's cloud tree: `apps/<appId>/cloud/`, with `cloud/main.js` its entry. */
export const cloudTree = (home: string, appId: string) => path.join(homePaths(home).app(appId), 'cloud');

/** How long a busy worker may take to answer a ping before a call goes to another, in milliseconds. */
const PING_MS = 100;
/** Workers an app may have besides its first, while that one is held by code that does not yield. */
const MAX_SPARES = 2;
/** How long the number of accounts is trusted before it is read again, in milliseconds. */
const ACCOUNTS_RECHECK_MS = 1000;
/** How long the absence or the known text of an app's `cloud/main.js` is trusted before the file is looked at again. */
export const MAIN_RECHECK_MS = 1000;

/**
 * Runs each Backend App's `cloud/main.js` in a worker process of its own (docs/design.md,
 * decision 8): started on first use, confined by Node's permission model to its own
 * cloud folder, capped in memory, stopped and restarted when a call outruns its time limit or the
 * process dies, and replaced without dropping calls in flight when the code is deployed again.
 * Every call it sends is recorded with the console output the worker attributes to it (`recentRuns`).
 */
export class WorkerCloudRuntime implements CloudRuntime {
  private readonly workers = new Map<string, Worker>();
  /** Extra workers of an app, started while its first one is held by code that does not yield. */
  private readonly spares = new Map<string, Worker[]>();
  /** A spare being started, shared by the calls that need it meanwhile. */
  private readonly spareStarts = new Map<string, Promise<Worker | undefined>>();
  private readonly starting = new Map<string, Promise<Worker | undefined>>();
  private readonly history = new RunHistory();
  private closed = false;
  private sockets: SandboxSockets | undefined;
  private dataHandler: SandboxDataHandler | undefined;
  private confinementState: { mode: ConfinementMode; why?: string } | undefined;
  /** `registryWithoutWorker`'s last reading of each app's main.js. */
  private readonly knownByApp = new Map<string, { mtimeMs: number; size: number; registry: CloudRegistry | undefined }>();
  /** The number of accounts as last read (ACCOUNTS_RECHECK_MS). */
  private accounts: { at: number; count: Promise<number> } | undefined;
  /** `registryWithoutWorker`'s answers of the last MAIN_RECHECK_MS. */
  private readonly withoutWorker = new Map<string, { at: number; registry: CloudRegistry | undefined }>();

  constructor(private readonly options: CloudRuntimeOptions) {}

  /**
   * The confinement in force, decided at the first call (BACKYARD_CLOUD_CONFINEMENT): `sandbox` when
   * the sandbox can be made here (or is required: then `why` says why workers cannot start), `none`
   * otherwise, with `why`. Said once in the log when the sandbox is missing.
   */
  confinement(): { mode: ConfinementMode; why?: string } {
    if (this.confinementState) return this.confinementState;
    const wanted = this.options.confinement;
    if (wanted === 'none') return (this.confinementState = { mode: 'none', why: 'BACKYARD_CLOUD_CONFINEMENT=none' });
    const why = sandboxUnavailable();
    if (!why) {
      this.options.log.info({ network: this.options.network }, 'cloud code runs in a bubblewrap sandbox (namespaces, no host files, no host network)');
      return (this.confinementState = { mode: 'sandbox' });
    }
    if (wanted === 'sandbox') {
      this.options.log.error({ why }, 'BACKYARD_CLOUD_CONFINEMENT=sandbox, and no sandbox can be made here: cloud code will not run');
      return (this.confinementState = { mode: 'sandbox', why });
    }
    this.options.log.warn(
      { why },
      'cloud code is NOT confined by the kernel here (Node\'s permission model only: it can reach local sockets, ports and processes); it runs only while the home has one account (BACKYARD_CLOUD_CONFINEMENT=auto); install bubblewrap (apt-get install bubblewrap) to confine it',
    );
    return (this.confinementState = { mode: 'none', why });
  }

  /**
   * Why cloud code may not run now, or undefined when it may: `sandbox` without a sandbox, and `auto`
   * without one in a home of more than one account, where one account's unconfined code could reach
   * another's processes, files and ports (docs/design.md, "Security stance"). The text says what to do.
   */
  private refusal(): string | undefined | Promise<string | undefined> {
    const confinement = this.confinement();
    if (confinement.mode === 'sandbox') {
      return confinement.why && `Cloud code may run only in a sandbox (BACKYARD_CLOUD_CONFINEMENT=sandbox), and none can be made on this machine: ${confinement.why}.`;
    }
    if (this.options.confinement === 'none') return undefined;
    const now = Date.now();
    if (!this.accounts || now - this.accounts.at >= ACCOUNTS_RECHECK_MS) {
      const count = this.options.accountCount();
      this.accounts = { at: now, count };
      // A failed read is not remembered: the next call reads again.
      count.catch(() => (this.accounts = undefined));
    }
    return this.accounts.count.then((accounts) =>
      accounts <= 1
        ? undefined
        : `Cloud code does not run on this server: no bubblewrap sandbox can be made here (${confinement.why ?? 'unknown reason'}), and with ${accounts} accounts ` +
          "one account's unconfined cloud code could reach another's processes, files and ports. Install bubblewrap (apt-get install bubblewrap) and restart Backyard, " +
          'or, knowing that, set BACKYARD_CLOUD_CONFINEMENT=none to run it unconfined.',
    );
  }

  /** @throws ParseError 141 with `refusal()`'s text when cloud code may not run now. */
  private async checkAllowed(): Promise<void> {
    const refused = await this.refusal();
    if (refused) throw new ParseError(ParseCode.SCRIPT_FAILED, refused);
  }

  /** Serves sandboxed workers' data API requests with `handler` (the HTTP front's `/data` handler). */
  attachDataApi(handler: SandboxDataHandler): void {
    this.dataHandler = handler;
    this.sockets?.attach(handler);
  }

  /** The sockets of sandboxes, made once. */
  private async sandboxSockets(): Promise<SandboxSockets> {
    if (!this.sockets) {
      this.sockets = new SandboxSockets({ network: this.options.network, allow: this.options.allowHosts, log: this.options.log });
      if (this.dataHandler) this.sockets.attach(this.dataHandler);
    }
    await this.sockets.ready();
    return this.sockets;
  }

  private mainFile(appId: string): string {
    return path.join(cloudTree(this.options.home, appId), 'cloud', 'main.js');
  }

  private async start(appId: string): Promise<Worker | undefined> {
    if (this.options.trees && !this.options.trees.ready(appId)) await this.options.trees.prepare(appId);
    const keys = await this.options.directory.keys(appId);
    const mainFile = this.mainFile(appId);
    if (this.closed || !keys || !fs.existsSync(mainFile)) return undefined;
    const tree = fs.realpathSync(cloudTree(this.options.home, appId));
    // A package scope of the app's own, so that a package.json above the home (one saying "module")
    // does not decide how the app's files load; without "type", Node detects ESM syntax per file.
    const marker = path.join(tree, 'package.json');
    if (!fs.existsSync(marker) || fs.readFileSync(marker, 'utf8').includes('"type"')) fs.writeFileSync(marker, '{}\n');
    // Module resolution walks links too: grant node_modules as found and as resolved. Node 20 aborts
    // on a path granted twice, so each appears once.
    const readable = new Set([fs.realpathSync(WORKER_SCRIPT), `${fs.realpathSync(NODE_MODULES)}${path.sep}`, `${fs.realpathSync(path.join(packageRoot(), 'node_modules'))}${path.sep}`, `${tree}${path.sep}`]);
    const links = linkedNodeModules();
    const execArgv = [
      '--experimental-permission',
      '--experimental-detect-module',
      ...[...readable, ...links.map(([, link]) => `${link}${path.sep}`)].map((p) => `--allow-fs-read=${p}`),
      `--max-old-space-size=${this.options.memoryMb}`,
      '--disable-warning=ExperimentalWarning',
    ];
    await this.checkAllowed();
    const confinement = this.confinement();
    const sockets = confinement.mode === 'sandbox' ? await this.sandboxSockets() : undefined;
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      BACKYARD_WORKER_CONFIG: JSON.stringify({
        applicationId: keys.applicationId,
        javascriptKey: keys.javascriptKey,
        masterKey: keys.masterKey,
        // In the sandbox the data API is a socket: any origin of our own routes there (worker.cts).
        serverURL: sockets ? 'http://backyard.sandbox/data' : this.options.dataApiUrl(),
        mainFile: fs.realpathSync(mainFile),
        logLimits: { lines: RUN_LIMITS.linesPerRun, chars: RUN_LIMITS.charsPerLine },
        ...(sockets ? { sandbox: { dataSocket: DATA_SOCKET, ...(sockets.egress ? { egressSocket: EGRESS_SOCKET } : {}) } } : {}),
      }),
    };
    const stdio: ['ignore', 'pipe', 'pipe', 'ipc'] = ['ignore', 'pipe', 'pipe', 'ipc'];
    const child = sockets
      ? spawn('bwrap', sandboxArgv([...readable], sockets, [process.execPath, ...execArgv, fs.realpathSync(WORKER_SCRIPT)], links), { env, stdio, serialization: 'json' })
      : fork(WORKER_SCRIPT, [], { execArgv, env, stdio, serialization: 'json' });
    const worker = new Worker(
      appId,
      child,
      this.options.log,
      (jobId, message) => this.options.onJobMessage?.(appId, jobId, message),
      (w) => {
        if (this.workers.get(appId) === w) this.workers.delete(appId);
        const spares = this.spares.get(appId)?.filter((s) => s !== w);
        if (spares?.length) this.spares.set(appId, spares);
        else this.spares.delete(appId);
      },
      this.options.idleMs,
    );
    await worker.ready;
    if (worker.loadError) this.options.log.warn({ app: appId, error: worker.loadError }, 'cloud code failed to load');
    return worker;
  }

  /** The app's live worker, starting one when there is none. */
  private async worker(appId: string): Promise<Worker | undefined> {
    const live = this.workers.get(appId);
    if (live && !live.exited) return live;
    let starting = this.starting.get(appId);
    if (!starting) {
      starting = this.start(appId).then(
        (w) => {
          this.starting.delete(appId);
          if (w && this.closed) w.kill();
          else if (w && !w.exited) this.workers.set(appId, w);
          return w;
        },
        (error: unknown) => {
          // Refused (or failed) now is not refused for good: the next call tries again.
          this.starting.delete(appId);
          throw error;
        },
      );
      this.starting.set(appId, starting);
    }
    return starting;
  }

  registryNow(appId: string): CloudRegistry | undefined {
    const live = this.workers.get(appId);
    if (live && !live.exited) return live.loaded;
    if (this.starting.has(appId)) return undefined;
    if (this.options.trees && !this.options.trees.ready(appId)) return undefined;
    // As start() decides, so that a main.js put in place by hand is loaded by the next call too.
    return this.registryWithoutWorker(appId);
  }

  async registry(appId: string): Promise<CloudRegistry> {
    const live = this.workers.get(appId);
    if (this.options.trees && !this.options.trees.ready(appId)) await this.options.trees.prepare(appId);
    if (!live || live.exited) {
      const known = this.starting.has(appId) ? undefined : this.registryWithoutWorker(appId);
      if (known) return known;
    }
    const worker = await this.worker(appId);
    return worker && !worker.exited ? worker.ready : EMPTY_REGISTRY;
  }

  /**
   * What an app registers when that is known without running its code: nothing when it has no
   * `cloud/main.js`, and the registry the operator gave for a `main.js` of known text (the template a
   * new app starts with), so that data API calls start no worker for it. Undefined otherwise. The text is read again only when the file's size or mtime changes.
   */
  private registryWithoutWorker(appId: string): CloudRegistry | undefined {
    // A stat per data API call was a fifth of a count's CPU here: the answer holds for a second
    // (a deploy or reload through this process forgets it at once).
    const recent = this.withoutWorker.get(appId);
    if (recent && Date.now() - recent.at < MAIN_RECHECK_MS) return recent.registry;
    const registry = this.readWithoutWorker(appId);
    this.withoutWorker.set(appId, { at: Date.now(), registry });
    return registry;
  }

  /** `registryWithoutWorker` from the file itself. */
  private readWithoutWorker(appId: string): CloudRegistry | undefined {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.mainFile(appId));
    } catch {
      return EMPTY_REGISTRY;
    }
    const known = this.options.knownRegistries;
    if (!known?.size) return undefined;
    const cached = this.knownByApp.get(appId);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.registry;
    let registry: CloudRegistry | undefined;
    try {
      registry = known.get(fs.readFileSync(this.mainFile(appId), 'utf8'));
    } catch {
      registry = undefined;
    }
    this.knownByApp.set(appId, { mtimeMs: stat.mtimeMs, size: stat.size, registry });
    return registry;
  }

  async run(appId: string, kind: 'function' | 'trigger' | 'job', name: string, request: Record<string, unknown>): Promise<unknown> {
    // Unconfined, a live worker too stops being used once the home has a second account.
    if (this.confinementState?.mode === 'none' && this.options.confinement === 'auto') await this.checkAllowed();
    const worker = await this.worker(appId);
    if (!worker) throw new ParseError(ParseCode.SCRIPT_FAILED, `Invalid ${kind}: "${name}" (the app has no cloud/main.js).`);
    if (worker.loadError) throw new ParseError(ParseCode.SCRIPT_FAILED, `The app's cloud code failed to load: ${worker.loadError}`);
    const timeout = kind === 'job' ? this.options.jobTimeoutMs : this.options.functionTimeoutMs;
    // Decided before any await when the first worker is free, so that calls made together see each other.
    const free = worker.pending.size === 0 ? worker : await this.freeWorker(appId, worker);
    return free.call(kind, name, request, timeout, this.history.begin(appId, kind, name, request));
  }

  /**
   * A worker whose event loop is free for a new call, for a call that finds `primary` running others: `primary` when it answers a ping within
   * `PING_MS`; else a spare that runs nothing or answers; else a new spare (at most `MAX_SPARES`;
   * callers that arrive while one starts share it); else, all held, `primary` after all.
   */
  private async freeWorker(appId: string, primary: Worker): Promise<Worker> {
    if (await primary.responsive(PING_MS)) return primary;
    const spares = (this.spares.get(appId) ?? []).filter((w) => !w.exited);
    for (const spare of spares) {
      if (spare.pending.size === 0 || (await spare.responsive(PING_MS))) return spare;
    }
    let starting = this.spareStarts.get(appId);
    if (!starting) {
      if (spares.length >= MAX_SPARES || this.closed) return primary;
      this.options.log.info({ app: appId }, 'cloud code worker held by code that does not yield: starting another');
      starting = this.start(appId)
        .then((started) => {
          if (!started || started.exited || started.loadError) return undefined;
          if (this.closed) return void started.kill();
          this.spares.set(appId, [...(this.spares.get(appId) ?? []), started]);
          return started;
        })
        .finally(() => this.spareStarts.delete(appId));
      this.spareStarts.set(appId, starting);
    }
    const started = await starting;
    return started && !started.exited ? started : primary;
  }

  /** The apps with a worker process running now. */
  appsWithWorkers(): string[] {
    return [...new Set([...this.workers.keys(), ...this.spares.keys()])].filter((appId) => this.liveWorkers(appId) > 0);
  }

  /** How many worker processes the app has running now (0 before its first call and once idle). */
  liveWorkers(appId: string): number {
    return [this.workers.get(appId), ...(this.spares.get(appId) ?? [])].filter((w) => w && !w.exited).length;
  }

  /** Kept in this process's memory only (see runs.ts): a restart starts with none. */
  recentRuns(appId: string): CloudRun[] {
    return this.history.recent(appId);
  }

  /** @throws Error with the load error when the new code fails to load (it is live all the same, answering 141). */
  async reload(appId: string): Promise<void> {
    this.withoutWorker.delete(appId);
    const previous = this.workers.get(appId);
    await this.starting.get(appId)?.catch(() => undefined);
    const next = await this.start(appId);
    if (next && !next.exited) this.workers.set(appId, next);
    else this.workers.delete(appId);
    if (previous && previous !== next) retire(previous);
    for (const spare of this.spares.get(appId) ?? []) retire(spare);
    this.spares.delete(appId);
    if (next?.loadError) throw new CloudLoadError(next.loadError);
  }

  /** Kills the app's primary and spare workers (one still starting too, once it is up) and drops them. */
  async forget(appId: string): Promise<void> {
    this.withoutWorker.delete(appId);
    const starting = this.starting.get(appId);
    const spareStart = this.spareStarts.get(appId);
    const kill = () => {
      for (const worker of [this.workers.get(appId), ...(this.spares.get(appId) ?? [])]) worker?.kill('was stopped because its app was deleted');
      this.workers.delete(appId);
      this.spares.delete(appId);
    };
    kill();
    await Promise.allSettled([starting, spareStart]);
    kill();
  }

  /** Stops every worker at once; workers still starting are stopped as soon as they are up. */
  async close(): Promise<void> {
    this.closed = true;
    for (const worker of [...this.workers.values(), ...[...this.spares.values()].flat()]) worker.kill();
    this.workers.clear();
    this.spares.clear();
    await Promise.allSettled([...this.starting.values()]);
    this.sockets?.close();
    this.sockets = undefined;
  }
}

/**
 * Backyard's `node_modules` when it is a symbolic link (a git worktree sharing its main checkout's), as
 * `[target, link]` for sandboxArgv: the sandbox binds the target, and the worker finds its packages
 * through the link.
 */
function linkedNodeModules(): Array<[string, string]> {
  const link = path.join(packageRoot(), 'node_modules');
  try {
    return fs.lstatSync(link).isSymbolicLink() ? [[fs.realpathSync(link), link]] : [];
  } catch {
    return [];
  }
}

/** Stops a replaced worker once the calls it is running have finished. */
function retire(worker: Worker): void {
  if (worker.pending.size === 0) return worker.kill();
  const check = setInterval(() => {
    if (worker.pending.size === 0 || worker.exited) {
      clearInterval(check);
      worker.kill();
    }
  }, 50);
  check.unref();
}

import path from 'node:path';
import type Docker from 'dockerode';
import type { Config } from '../../config.js';
import { reportWhileRunning } from './progress.js';
import { invalid, notFound, unavailable } from '../../errors.js';
import type { Logger } from '../../log.js';
import { newId } from '../../shared/ids.js';
import { nowIso } from '../../shared/sqlite.js';
import type { Sql } from '../../shared/sql.js';
import { EnvironmentContainers, type ContainerSettings } from './containers.js';
import { ENGINE_TIMEOUTS, dockerClient, engineStatus, type DockerClient } from './engine.js';
import { LiveExecution, inputScript, runScript } from './executions.js';
import { ProcessGroups, SIGNAL_TIMING } from './processGroups.js';
import { startFailureText } from './startFailure.js';
import { hostGatewayAddress } from './hostGateway.js';
import { ImageProvider } from './image.js';
import type { ImageFacts } from './imageFacts.js';
import { AccountNetworks } from './networks.js';
import { FollowedExecutions } from './followed.js';
import {
  DevEnvStore,
  environmentOf,
  executionOf,
  type CommandExecution,
  type DevelopmentEnvironment,
  type EnvironmentActivity,
  type EnvironmentRow,
  type ExecutionRow,
  type ExecutionSummary,
} from './store.js';
import type { DevEnvOperations } from '../services.js';

export type { CommandExecution, DevelopmentEnvironment, EnvironmentActivity, ExecutionSummary } from './store.js';

/**
 * createDevelopmentEnvironment's answer: the environment, plus what runs it: `image`, `operatingSystem` when known, and `installCommand` (`<package>` standing
 * for the names) unless the image has no package manager.
 */
export type CreatedEnvironment = DevelopmentEnvironment & Omit<ImageFacts, 'packageManager'>;

/** What guides say of the environments' image (urls.ts, `fillAddresses`). */
export interface EnvironmentImageText {
  image: string;
  installCommand?: string;
  /** The base image of the Web App guide's Node example. */
  nodeBaseImage: string;
}

/** Settings of the development environment service (Config: BACKYARD_DEVENV_*, BACKYARD_EXEC_WAIT_MS, DOCKER_HOST). */
export interface DevEnvSettings extends ContainerSettings {
  /** How long executeCommand waits for the command to exit, in milliseconds (docs/design.md, decision 9). */
  execWaitMs: number;
}

/** chatTitle: 1 to 200 characters. */
export const CHAT_TITLE_MAX = 200;

/** Timing of interactWithCommandExecution, in milliseconds. */
export const INTERACTION = {
  /** After stdin, answer once the command's answer has been followed by this much quiet... */
  quietMs: 500,
  /** ...or when it has written nothing this long after the input... */
  firstOutputMs: 2_000,
  /** ...and this long after the input at most. */
  capMs: 5_000,
  /** exit: SIGTERM, then SIGKILL after the grace period (processGroups.ts). */
  ...SIGNAL_TIMING,
} as const;

/** How long a command's output must be quiet before executeCommand checks whether it waits for input, in milliseconds. */
const INPUT_QUIET_MS = 1_000;

/** How many executions `executions` lists when no limit is given (the dashboard's environment page). */
export const EXECUTIONS_LIST_LIMIT = 200;

/** Appended to the stderr of executions ended by restartDevelopmentEnvironment. */
const RESTART_NOTE = '[backyard: the environment was restarted (restartDevelopmentEnvironment): every process in it ended, /workspace was kept.]\n';
/** Appended to the stderr of executions ended by deleteDevelopmentEnvironment. */
const DELETE_NOTE = '[backyard: the environment was deleted (deleteDevelopmentEnvironment), which ended this command.]\n';

/**
 * Development environments and command executions (Interface A operations 2 to 6): domain rules,
 * records in `platform.db`, containers and execs on the Docker engine. Knows nothing of HTTP or MCP.
 *
 * Every method takes the caller's account id: another account's environments and executions behave
 * as unknown ids (docs/design.md, decision 2).
 */
export class DevEnvService implements DevEnvOperations {
  private readonly store: DevEnvStore;
  private readonly containers: EnvironmentContainers;
  private readonly images: ImageProvider;
  private readonly groups: ProcessGroups;
  /** The executions this process runs, and their records (followed.ts). */
  private readonly followed: FollowedExecutions;
  private closed = false;
  private openForContainers: ((address: string) => Promise<string>) | undefined;
  private access: Promise<void> | undefined;
  private backyardUrl: string | undefined;

  /**
   * @param networks the accounts' networks; platform.ts gives the Web App service the same one, so that
   *   one process creates an account's network once.
   */
  constructor(
    db: Sql,
    private readonly settings: DevEnvSettings,
    private readonly log: Logger,
    private readonly docker: DockerClient = dockerClient(settings.dockerHost),
    networks: AccountNetworks = new AccountNetworks(docker, settings.home, log),
  ) {
    this.store = new DevEnvStore(db);
    this.images = new ImageProvider(docker, settings.dockerHost, log, settings.image);
    this.containers = new EnvironmentContainers(docker, settings, this.images, networks, log);
    this.groups = new ProcessGroups(docker, settings.dockerHost, this.containers, log);
    this.followed = new FollowedExecutions(this.store, this.containers, this.groups, log);
  }

  /**
   * Marks exited the executions a stopped Backyard process left running.
   * openPlatform calls it once, before anything is served.
   */
  async recoverInterrupted(): Promise<void> {
    for (const row of await this.store.runningExecutions()) await this.followed.reconcile(row);
  }

  /**
   * Creates an environment for `chatTitle`: its record, volume and running container, on the
   * configured image or, when that cannot be had, on Backyard's offline image (image.ts).
   * @returns `{id, chatTitle, createdAt, backyardURL?, image, operatingSystem?, installCommand?}`.
   * @throws ManagementError(invalid) for a blank or too long title; (unavailable) when Docker is not
   *   reachable, no image can be had (or the offline one is still being built), or the engine refuses.
   */
  async create(accountId: string, chatTitle: string, progress?: (message: string) => void): Promise<CreatedEnvironment> {
    if (chatTitle.trim() === '') throw invalid('chatTitle must not be empty or blank: use the title of the current chat.');
    if (chatTitle.length > CHAT_TITLE_MAX) throw invalid(`chatTitle must be at most ${CHAT_TITLE_MAX} characters long (it has ${chatTitle.length}).`);
    const row: EnvironmentRow = { id: newId(), account_id: accountId, chat_title: chatTitle, created_at: nowIso() };
    progress?.(`Getting the image (${this.images.current().image}) and starting the container.`);
    const image = await this.containers.create(accountId, row.id);
    await this.store.insertEnvironment(row);
    progress?.(`The container runs ${image}; letting it reach Backyard at backyard.internal.`);
    await this.containerAccess();
    const { packageManager: _, ...facts } = await this.imageFacts(image);
    return { ...this.withAccess(environmentOf(row)), ...facts };
  }

  /** The facts of the image an environment was just created on; the image's name alone when it cannot be looked into. */
  private async imageFacts(image: string): Promise<ImageFacts> {
    try {
      return await this.images.factsOf(image);
    } catch (error) {
      this.log.warn({ err: error, image }, 'could not tell which package manager the development environment image has');
      return { image };
    }
  }

  /**
   * What the guides say of the environments' image, without waiting (`ImageProvider.current`): the
   * image, its install command, and the Node base image of the Web App guide.
   */
  imageText(): EnvironmentImageText {
    const { image, installCommand } = this.images.current();
    return { image, ...(installCommand ? { installCommand } : {}), nodeBaseImage: this.images.nodeBaseImage() };
  }

  /** The account's environments, oldest first; only those titled exactly `chatTitle` when given. */
  async list(accountId: string, chatTitle?: string): Promise<DevelopmentEnvironment[]> {
    return (await this.store.environments(accountId, chatTitle)).map((row) => this.withAccess(environmentOf(row)));
  }

  /**
   * Lets containers reach Backyard: `open(address)` is called once, with the host's address
   * on Docker's bridge, before the first environment answers, and resolves to Backyard's URL as
   * containers use it (`http://backyard.internal:<port>`). Called by the HTTP front.
   */
  serveContainersWith(open: (address: string) => Promise<string>): void {
    this.openForContainers = open;
    // A serving process: learn which image environments will run, for the guides (imageText).
    void this.surveyImages();
  }

  /**
   * Looks which of the configured and the fallback image the engine has (`ImageProvider.survey`), so
   * that `imageText` is right before the first environment is made. Never throws.
   */
  surveyImages(): Promise<void> {
    return this.images.survey();
  }

  /** Backyard's URL from inside environments once known (`backyardURL` of DevelopmentEnvironment). */
  private withAccess(env: DevelopmentEnvironment): DevelopmentEnvironment {
    return this.backyardUrl ? { ...env, backyardURL: this.backyardUrl } : env;
  }

  /** Opens the front for containers once; a failure is logged and tried again at the next create. */
  private containerAccess(): Promise<void> {
    if (!this.openForContainers) return Promise.resolve();
    const open = this.openForContainers;
    this.access ??= (async () => {
      const address = await hostGatewayAddress(this.docker, this.settings.dockerHost, await this.images.ensure());
      if (!address) {
        this.log.warn('the Docker engine maps host-gateway to no IPv4 address: environments cannot reach Backyard by backyard.internal');
        return;
      }
      this.backyardUrl = await open(address);
      this.log.info({ address, url: this.backyardUrl }, 'containers reach Backyard by backyard.internal');
    })().catch((error: unknown) => {
      this.log.warn({ err: error }, 'could not let containers reach Backyard; trying again with the next environment');
      this.access = undefined;
    });
    return this.access;
  }

  /**
   * Runs `sh -c <command>` in the environment and answers when it exits or after `execWaitMs`
   * (or when `signal` aborts), whichever is first; the command goes on running after a `running` answer.
   * `progress`, when given, hears that it started and then, every `PROGRESS_EVERY_MS` while the
   * call waits, how long it has run and how its output ends so far.
   * @throws ManagementError(notFound) for an unknown environment; (invalid) for an empty command;
   *   (unavailable) when Docker is not reachable or refuses.
   */
  async execute(accountId: string, environmentId: string, command: string, signal?: AbortSignal, progress?: (message: string) => void): Promise<CommandExecution> {
    await this.requireEnvironment(accountId, environmentId);
    if (command === '') throw invalid('command must not be empty: give a shell command line, run with sh -c.');
    if (this.closed) throw unavailable('Backyard is stopping; run the command again once it is back.');
    const id = newId();
    const execution = await this.startExec(accountId, environmentId, id, command);
    const createdAt = nowIso();
    await this.store.insertExecution({ id, environment_id: environmentId, command, owner: this.followed.owner, created_at: createdAt });
    const { recorded } = this.followed.follow(execution, environmentId, accountId);
    const stopReporting = progress ? reportWhileRunning(execution, command, progress) : undefined;
    try {
      if (await this.waitForExitOrInput(accountId, environmentId, execution, Date.now() + this.settings.execWaitMs, signal)) await recorded;
    } finally {
      stopReporting?.();
    }
    return execution.snapshot();
  }

  /**
   * Writes `stdin` (a newline added when missing) to a running execution and waits for its output to
   * settle; then, with `exit`, ends it: SIGTERM to its process group, SIGKILL after a grace period.
   * @throws ManagementError(notFound) for unknown ids; (invalid) when the execution has already
   *   exited; (unavailable) when Docker is not reachable or the command could not be ended.
   */
  async interact(
    accountId: string,
    environmentId: string,
    executionId: string,
    action: { stdin?: string; exit?: boolean },
    signal?: AbortSignal,
  ): Promise<CommandExecution> {
    const row = await this.requireExecution(accountId, environmentId, executionId);
    const entry = this.followed.get(executionId);
    if (row.status === 'exited' || entry?.execution.status === 'exited') {
      const code = entry?.execution.exitCode ?? row.exit_code;
      throw invalid(
        `The command execution "${executionId}" has already exited (exit code ${code}): it takes no more input and cannot be stopped. ` +
          'Call inspectCommandExecution to read its output, or executeCommand to run a command again.',
      );
    }
    if (!entry) {
      throw unavailable(
        `The command execution "${executionId}" is run by another Backyard process on this home (${row.owner}); only that process can send it input or stop it. Use that server, or wait for it to finish.`,
      );
    }
    const { execution } = entry;
    if (action.stdin !== undefined) {
      const since = Date.now();
      execution.writeStdin(action.stdin.endsWith('\n') ? action.stdin : `${action.stdin}\n`);
      await execution.waitForSettle(INTERACTION, since, signal);
    }
    if (action.exit) await this.groups.end(entry);
    if (action.stdin === undefined && !action.exit) await execution.waitForSettle(INTERACTION, Date.now(), signal);
    if (execution.status === 'exited') await entry.recorded;
    return execution.snapshot();
  }

  /**
   * The execution's current state: status, exitCode once exited, output so far.
   * @throws ManagementError(notFound) for unknown ids.
   */
  async inspect(accountId: string, environmentId: string, executionId: string): Promise<CommandExecution> {
    const row = await this.requireExecution(accountId, environmentId, executionId);
    const entry = this.followed.get(executionId);
    return entry ? entry.execution.snapshot() : executionOf(row);
  }

  /**
   * The newest `limit` executions of an environment, newest first (by start time, then by the order
   * they were recorded), without their output. Read as stored: an execution whose Backyard went away
   * reads `running` here until `inspect` settles it.
   * @param limit how many at most, a positive integer (default `EXECUTIONS_LIST_LIMIT`, 200).
   * @throws ManagementError(notFound) for an unknown environment or another account's (docs/design.md,
   *   decision 2); (invalid) for a limit that is not a positive integer (SQLite reads a negative LIMIT as none).
   */
  async executions(accountId: string, environmentId: string, limit = EXECUTIONS_LIST_LIMIT): Promise<ExecutionSummary[]> {
    await this.requireEnvironment(accountId, environmentId);
    if (!Number.isInteger(limit) || limit < 1) throw invalid(`limit must be a positive integer (it is ${limit}).`);
    return this.store.executionSummaries(environmentId, limit);
  }

  /**
   * An environment's activity at a glance: how many executions it has, how many are marked running
   * (as stored, see `executions`), and its latest one.
   * @throws ManagementError(notFound) for an unknown environment or another account's.
   */
  async activity(accountId: string, environmentId: string): Promise<EnvironmentActivity> {
    await this.requireEnvironment(accountId, environmentId);
    const { total, running } = await this.store.executionCounts(environmentId);
    const [latest] = await this.store.executionSummaries(environmentId, 1);
    return { total, running, ...(latest ? { latest } : {}) };
  }

  /**
   * One execution's command, state and times, without its output (as stored, see `executions`).
   * @throws ManagementError(notFound) for unknown ids, or an environment of another account.
   */
  async executionSummary(accountId: string, environmentId: string, executionId: string): Promise<ExecutionSummary> {
    await this.requireEnvironment(accountId, environmentId);
    const summary = await this.store.executionSummary(environmentId, executionId);
    if (!summary) throw executionNotFound(environmentId, executionId);
    return summary;
  }

  /**
   * restartDevelopmentEnvironment: kills the environment's container and starts it again; every
   * process in it ends (executions still running read exited, with a note), /workspace stays.
   * @throws ManagementError(notFound) for an unknown environment; (unavailable) when Docker fails.
   */
  async restart(accountId: string, environmentId: string): Promise<DevelopmentEnvironment> {
    const env = await this.requireEnvironment(accountId, environmentId);
    const ending = this.followed.in(environmentId);
    for (const { execution } of ending) execution.note(RESTART_NOTE);
    await this.containers.restart(accountId, environmentId);
    await this.followed.settle(ending, INTERACTION.afterKillMs);
    await this.containerAccess();
    return this.withAccess(environmentOf(env));
  }

  /**
   * deleteDevelopmentEnvironment: ends the commands still running in it, removes its container and
   * workspace volume, then its executions and its record.
   * @throws ManagementError(notFound) for an unknown environment; (unavailable) when Docker fails
   *   (then the record stays, and deleting again retries).
   */
  async remove(accountId: string, environmentId: string): Promise<void> {
    await this.requireEnvironment(accountId, environmentId);
    const ending = this.followed.in(environmentId);
    for (const { execution } of ending) execution.note(DELETE_NOTE);
    await this.containers.destroy(accountId, environmentId);
    await this.followed.settle(ending, INTERACTION.afterKillMs);
    await this.store.deleteEnvironment(environmentId);
    this.log.info({ environmentId }, 'development environment deleted');
  }

  /** The account that owns an environment, whoever asks: for the machine's owner (CLI). */
  async ownerOf(environmentId: string): Promise<string | undefined> {
    return (await this.store.environmentById(environmentId))?.account_id;
  }

  /**
   * Stops following executions (FollowedExecutions.close): each one still running is ended inside its
   * container without waiting, and its row is settled by the next reader or the next Backyard on
   * this home. Call once, before the database closes.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.followed.close();
  }

  private async requireEnvironment(accountId: string, environmentId: string): Promise<EnvironmentRow> {
    const env = await this.store.environment(accountId, environmentId);
    if (!env) {
      throw notFound(
        `No development environment has the id "${environmentId}" in this account. Call getDevelopmentEnvironments to list yours, or createDevelopmentEnvironment to make one.`,
      );
    }
    return env;
  }

  private async requireExecution(accountId: string, environmentId: string, executionId: string): Promise<ExecutionRow> {
    await this.requireEnvironment(accountId, environmentId);
    const row = await this.store.execution(environmentId, executionId);
    if (!row) throw executionNotFound(environmentId, executionId);
    return this.followed.reconcile(row);
  }

  /** Starts the exec, starting or recreating the container once when the engine says it is not running or gone. */
  private async startExec(accountId: string, environmentId: string, id: string, command: string): Promise<LiveExecution> {
    for (let attempt = 0; ; attempt++) {
      const container = await this.containers.running(accountId, environmentId);
      try {
        return await LiveExecution.start(this.docker, this.settings.dockerHost, container, id, command, (message) =>
          this.explainStartFailure(container, environmentId, id, message),
        );
      } catch (error) {
        if (attempt > 0 || !isContainerGone(error)) throw error;
        this.containers.forget(environmentId);
      }
    }
  }

  /**
   * The `startError` of an execution the runtime could not start: reads the container's task count
   * (one-shot stats, no exec needed) to tell a full process table from another failure.
   */
  private async explainStartFailure(container: Docker.Container, environmentId: string, executionId: string, runtimeMessage: string): Promise<string> {
    let tasks: number | undefined;
    try {
      const stats = await container.stats({ stream: false, 'one-shot': true });
      tasks = stats.pids_stats?.current;
    } catch (error) {
      this.log.debug({ err: error, environmentId }, 'could not read the task count of a development environment');
    }
    const running = this.followed
      .in(environmentId)
      .filter((e) => e.execution.id !== executionId && e.execution.status === 'running')
      .map((e) => e.execution.id);
    return startFailureText({ runtimeMessage, tasks, limit: this.settings.pids, running });
  }

  /**
   * executeCommand's wait (docs/design.md, decision 9): true once the execution exits; false at
   * `deadline` (ms since the epoch), when `signal` aborts, or as soon as the command is found waiting
   * for input, which is checked (`inputScript`, one exec) each time its output has been quiet for
   * `INPUT_QUIET_MS`, so that `read name` answers `running` with its prompt instead of after the whole wait.
   */
  private async waitForExitOrInput(
    accountId: string,
    environmentId: string,
    execution: LiveExecution,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    let checkedAt = 0;
    for (;;) {
      const now = Date.now();
      if (now >= deadline || signal?.aborted) return execution.status === 'exited';
      const checkAt = Math.max(execution.lastOutputAt, checkedAt) + INPUT_QUIET_MS;
      if (await execution.waitForExit(Math.max(1, Math.min(deadline, checkAt) - now), signal)) return true;
      if (Date.now() >= deadline || Date.now() < Math.max(execution.lastOutputAt, checkedAt) + INPUT_QUIET_MS) continue;
      checkedAt = Date.now();
      if (await this.waitsForInput(accountId, environmentId, execution.id)) return execution.status === 'exited';
    }
  }

  /** Whether the execution reads its standard input right now; false when that cannot be told. */
  private async waitsForInput(accountId: string, environmentId: string, executionId: string): Promise<boolean> {
    try {
      const container = await this.containers.running(accountId, environmentId);
      const outcome = await runScript(this.docker, this.settings.dockerHost, container, inputScript(executionId), ENGINE_TIMEOUTS.request);
      return 'exitCode' in outcome && outcome.exitCode === 0;
    } catch {
      return false;
    }
  }
}

const executionNotFound = (environmentId: string, executionId: string) =>
  notFound(`No command execution has the id "${executionId}" in the development environment "${environmentId}". Use the id that executeCommand answered.`);

/** The engine's answer when an exec targets a container that stopped (409) or was removed (404). */
const isContainerGone = (error: unknown): boolean => {
  const status = engineStatus(error) ?? engineStatus((error as { cause?: unknown }).cause);
  if (status === 404 || status === 409) return true;
  const message = error instanceof Error ? error.message : '';
  return /is not running|No such container|is paused|is restarting/i.test(message);
};

/** The service's settings from Backyard's configuration. */
export const devEnvSettings = (config: Config): DevEnvSettings => ({
  home: path.resolve(config.home),
  dockerHost: config.dockerHost,
  image: config.devenvImage,
  memoryMb: config.devenvMemoryMb,
  cpus: config.devenvCpus,
  pids: config.devenvPids,
  network: config.devenvNetwork,
  execWaitMs: config.execWaitMs,
});

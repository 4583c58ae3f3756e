import type Docker from 'dockerode';
import { KEPT_CAPABILITIES } from '../devenvs/containers.js';
import { engineMessage, engineStatus, type DockerClient } from '../devenvs/engine.js';
import { DeployError, engineStep } from './engine.js';
import { healthy, probeAt } from './health.js';
import {
  KIND_WEBAPP,
  LABEL_ACCOUNT,
  LABEL_HOME,
  LABEL_KIND,
  LABEL_TASK_DEPLOYMENT,
  LABEL_WEBAPP,
  accountOverlayName,
  reachNetworkName,
  serviceLabels,
  serviceName,
  serviceNetworkLabels,
  taskLabels,
} from './labels.js';
import { parseContainerLogs } from './logs.js';
import type { LogRow } from './store.js';

/** Settings of Web App services: those of the containers (runner.ts) and the home whose services they are. */
export interface SwarmSettings {
  home: string;
  dockerHost: string | undefined;
  memoryMb: number;
  cpus: number;
  /** BACKYARD_WEBAPP_SWARM: `off` keeps Web Apps in plain containers even on a swarm manager. */
  swarm: 'auto' | 'off';
}

/** What one deployment of a Web App runs as its service's tasks. */
export interface ServiceInput {
  accountId: string;
  webAppId: string;
  deploymentId: string;
  /** The image reference (`imageTag`). */
  image: string;
  /** The port the app listens on inside its containers. */
  port: number;
  /** `KEY=value` pairs: never logged. */
  env: string[];
  replicas: number;
}

/** One running task of a Web App's service, as the proxy connects to it. */
export interface TaskTarget {
  taskId: string;
  containerId: string;
  /** The deployment whose image the task runs. */
  deploymentId: string;
  /** The task container's address on the home's reach network (see `SwarmServices`). */
  ip: string;
  port: number;
}

/** What `deploy` replaced, to put back when the deployment fails. */
export interface Replaced {
  /** The service's spec before the update; undefined when the service was created. */
  previous: Docker.ServiceSpec | undefined;
}

/** Time-outs of single engine requests, and how often convergence is looked at, in milliseconds. */
const REQUEST_MS = 30_000;
const POLL_MS = 100;
/** How long `active` trusts its last `docker info`. */
const MODE_TTL_MS = 5_000;
/** Process limit of a task container (as runner.ts's PIDS). */
const PIDS = 1024;
/** Nanoseconds, as the swarm API counts durations. */
const SECOND_NS = 1_000_000_000;
/** How long a rolling update watches each new task before it moves on to the next slot (see `serviceSpec`). */
const UPDATE_WAIT_NS = 5 * SECOND_NS;
/** The driver option that keeps containers on one bridge from reaching each other (libnetwork's bridge driver). */
const ICC_OPTION = 'com.docker.network.bridge.enable_icc';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Engine API body of a Web App's service for one deployment (Engine API 1.41, `ServiceSpec`):
 * - `replicas` tasks of the image with the app's variables, the limits and confinement of a plain
 *   Web App container (runner.ts: memory, CPUs, processes, capabilities), restarted on any exit;
 * - no health check of its own in the spec, so the image's `HEALTHCHECK`, when it has one, gates
 *   the rollout (the engine reports a task running only once it is healthy); Backyard's own HTTP
 *   check (health.ts) gates the deployment's activation and every task's share of the traffic (tasks.ts);
 * - rolling updates one task at a time, the new task started before the old one stops
 *   (`Order: 'start-first'`), 5 s apart, and rolled back the same way;
 * - on the account's attachable overlay network (its services reach each other by service name,
 *   round robin over the tasks' own addresses: `Mode: 'dnsrr'`, since a service's virtual IP does
 *   not route on these machines, docs/notes/docker.md) and on the home's reach network (see `SwarmServices`);
 * - no published port at all.
 */
export function serviceSpec(settings: SwarmSettings, input: ServiceInput): Docker.ServiceSpec {
  return {
    Name: serviceName(settings.home, input.webAppId),
    Labels: serviceLabels(settings.home, input.accountId, input.webAppId),
    TaskTemplate: {
      ContainerSpec: {
        Image: input.image,
        Env: input.env,
        Labels: taskLabels(settings.home, input.accountId, input.webAppId, input.deploymentId),
        Init: true,
        StopGracePeriod: 10 * SECOND_NS,
        CapabilityDrop: ['ALL'],
        CapabilityAdd: [...KEPT_CAPABILITIES],
      } as Docker.ContainerSpec,
      Resources: {
        Limits: { MemoryBytes: settings.memoryMb * 1024 * 1024, NanoCPUs: Math.round(settings.cpus * 1e9), Pids: PIDS } as Docker.ResourceLimits,
      },
      RestartPolicy: { Condition: 'any', Delay: SECOND_NS / 2 },
      Networks: [{ Target: accountOverlayName(settings.home, input.accountId) }, { Target: reachNetworkName(settings.home) }],
    },
    Mode: { Replicated: { Replicas: input.replicas } },
    // The engine takes a task that runs for a healthy one (unless the image has a HEALTHCHECK), and
    // start-first stops the old task of a slot as soon as the new one runs: a new image that exits a
    // moment after it starts would take every slot down one after the other. Waiting `Delay` (as long
    // as `Monitor`) before the next slot lets the engine see such a task fail and pause the update
    // while the other slots still run the old image; the deployment then fails and `restore` puts it back.
    UpdateConfig: { Parallelism: 1, Delay: UPDATE_WAIT_NS, Order: 'start-first', FailureAction: 'pause', Monitor: UPDATE_WAIT_NS },
    RollbackConfig: { Parallelism: 1, Delay: UPDATE_WAIT_NS, Order: 'start-first', FailureAction: 'pause', Monitor: UPDATE_WAIT_NS },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}

/**
 * Web Apps as Docker Swarm services, when the engine is a swarm manager (`active`): one service per
 * Web App, updated in place by each deployment, removed with the app; one attachable overlay network
 * per account for its services.
 *
 * How Backyard's proxy reaches the tasks. A swarm service's ports can be published in `host` mode,
 * but the Engine API's `PortConfig` has no host address (only `Name`, `Protocol`, `TargetPort`,
 * `PublishedPort`, `PublishMode`; Engine API 1.41): such a port listens on every address of the
 * machine, so other machines could reach the app past Backyard's proxy (docs/design.md, "Security
 * stance"). The overlay cannot be used directly either: Backyard runs on the host, which has no
 * address on an overlay network. So every task is also on the home's reach network: a bridge on
 * this machine in swarm scope (`Scope: 'swarm'`, so that services may use it), with inter-container
 * traffic off (`enable_icc=false`, set on its config-only network `<name>-config`: tasks of different
 * accounts on it cannot reach each other), and
 * no port published. The host reaches a task's container at its bridge address, as it reaches plain
 * Web App containers (addresses.ts); other machines have no route to that private subnet, and the
 * engine's firewall forwards to containers only for published ports. This holds for a single-node
 * swarm, the case Backyard supports: on a larger swarm a task on another node is not reachable this way.
 *
 * Every call has a time-out and fails with a DeployError saying what failed.
 */
export class SwarmServices {
  private mode: { at: number; active: boolean } | undefined;

  constructor(
    private readonly docker: DockerClient,
    private readonly settings: SwarmSettings,
  ) {}

  /**
   * Whether the engine is a swarm manager (`docker info`: `Swarm.LocalNodeState` "active" and
   * `Swarm.ControlAvailable`), asked at most every 5 s; false when the engine cannot be asked, and
   * always false with BACKYARD_WEBAPP_SWARM=off.
   */
  async active(): Promise<boolean> {
    if (this.settings.swarm === 'off') return false;
    if (this.mode && Date.now() - this.mode.at < MODE_TTL_MS) return this.mode.active;
    let active = false;
    try {
      const info = (await this.docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
      active = info.Swarm?.LocalNodeState === 'active' && info.Swarm.ControlAvailable === true;
    } catch {
      active = false;
    }
    this.mode = { at: Date.now(), active };
    return active;
  }

  /**
   * Creates the Web App's service, or updates it to this deployment's spec (a rolling update,
   * start-first), after making the networks it needs.
   * @returns what it replaced, for `restore`.
   * @throws DeployError when the engine fails.
   */
  async deploy(input: ServiceInput, signal: AbortSignal): Promise<Replaced> {
    const host = this.settings.dockerHost;
    await engineStep(host, "create the account's overlay network", REQUEST_MS, (abortSignal) =>
      this.ensureNetwork(accountOverlayName(this.settings.home, input.accountId), { Driver: 'overlay', Attachable: true }, serviceNetworkLabels(this.settings.home, input.accountId), abortSignal),
    );
    // A bridge in swarm scope takes its driver options from a local config-only network on each node
    // (docs.docker.com, "docker network create": "Swarm networks with local scope drivers"): options
    // given to the swarm network itself are not applied to the bridge (seen with engine 20.10), and
    // the engine refuses labels on it ("user specified configurations are not supported if the
    // network depends on a configuration network"), so only the config-only network is labelled.
    const reach = reachNetworkName(this.settings.home);
    await engineStep(host, 'create the reach network', REQUEST_MS, async (abortSignal) => {
      await this.ensureNetwork(`${reach}-config`, { ConfigOnly: true, Options: { [ICC_OPTION]: 'false' } }, serviceNetworkLabels(this.settings.home, ''), abortSignal);
      await this.ensureNetwork(reach, { Driver: 'bridge', Scope: 'swarm', ConfigFrom: { Network: `${reach}-config` } }, undefined, abortSignal);
    });
    if (signal.aborted) throw new DeployError('Backyard stopped while the service was being made.');
    const spec = serviceSpec(this.settings, input);
    const existing = await this.find(input.webAppId);
    if (!existing) {
      await engineStep(host, 'create the service', REQUEST_MS, (abortSignal) => this.docker.createService(undefined as never, { _body: spec, abortSignal } as never as Docker.ServiceSpec));
      return { previous: undefined };
    }
    const info = await this.inspect(existing);
    await this.update(existing, info.Version?.Index ?? 0, spec, 'update the service');
    return { previous: info.Spec };
  }

  /**
   * Waits until `input.replicas` tasks of this deployment run and each answers `GET path` with 2xx or 3xx on
   * its reach address (Backyard's health check, health.ts).
   * @throws DeployError when a task of this deployment fails or is rejected (with the engine's reason),
   *   the engine pauses or rolls back the update, or the time runs out (saying what the last look saw).
   */
  async waitConverged(input: ServiceInput, path: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no task of it ran yet';
    for (;;) {
      if (signal.aborted) throw new DeployError('Backyard stopped while the service was starting.');
      const id = await this.find(input.webAppId);
      if (!id) throw new DeployError('the service was removed while it was starting.');
      const info = await this.inspect(id);
      const all = await this.tasks(id);
      const tasks = all.filter((t) => t.Spec?.ContainerSpec?.Labels?.[LABEL_TASK_DEPLOYMENT] === input.deploymentId);
      const broken = tasks.find((t) => ['failed', 'rejected'].includes(t.Status?.State ?? '') || (t.Status?.State === 'complete' && t.DesiredState === 'running'));
      if (broken) {
        const why = broken.Status?.Err || broken.Status?.Message || broken.Status?.State;
        const exit = broken.Status?.ContainerStatus?.ExitCode;
        throw new DeployError(`a task of the service ${broken.Status?.State}${exit !== undefined ? ` (exit code ${exit})` : ''}: ${why}. The deployment's container logs show what it printed.`);
      }
      // After the tasks: a failed task pauses the update, and the task says why.
      const update = (info as { UpdateStatus?: { State?: string; Message?: string } }).UpdateStatus;
      if (update?.State && /paused|rollback/.test(update.State)) throw new DeployError(`the engine stopped the rolling update (${update.State}: ${update.Message ?? ''}).`);
      const running = tasks.filter((t) => t.DesiredState === 'running' && t.Status?.State === 'running');
      // Active means every slot runs this deployment: no task of an earlier one is still meant to run.
      const older = all.filter((t) => t.DesiredState === 'running' && t.Spec?.ContainerSpec?.Labels?.[LABEL_TASK_DEPLOYMENT] !== input.deploymentId).length;
      if (older > 0) {
        last = `${older} task(s) of the deployment before still ran`;
      } else if (running.length >= input.replicas) {
        const targets = await this.addresses(running, input.port);
        const results = await Promise.all(targets.map((t) => probeAt(t.ip, t.port, path, 2000)));
        if (targets.length >= input.replicas && results.every(healthy)) return;
        const bad = results.find((r) => !healthy(r));
        last = bad ? ('status' in bad ? `a task answered status ${bad.status}` : `a task: ${bad.error}`) : 'a task had no address on the reach network yet';
      } else {
        last = `${running.length} of ${input.replicas} tasks ran`;
      }
      if (Date.now() + POLL_MS >= deadline) break;
      await sleep(POLL_MS);
    }
    throw new DeployError(
      `the service did not become healthy within ${Math.round(timeoutMs / 1000)} s (last look: ${last}): every task must answer GET ${path} on port ${input.port} with 2xx or 3xx. ` +
        `Check that the app listens on 0.0.0.0:${input.port} and that ${path} answers 2xx (or set healthCheckPath).`,
    );
  }

  /** After a failed deployment: the service goes back to the spec `deploy` replaced, or goes away when `deploy` created it. Never throws. */
  async restore(webAppId: string, accountId: string, replaced: Replaced): Promise<void> {
    try {
      if (!replaced.previous) return await this.remove(webAppId, accountId);
      const id = await this.find(webAppId);
      if (!id) return;
      const info = await this.inspect(id);
      await this.update(id, info.Version?.Index ?? 0, replaced.previous, 'roll the service back');
    } catch {
      // The next deployment updates the service again; deleting the app removes it.
    }
  }

  /**
   * The Web App's running tasks with their reach addresses (tasks the engine still starts or stops are
   * left out; whether they answer is for the caller to find out).
   */
  async targets(webAppId: string, port: number): Promise<TaskTarget[]> {
    const id = await this.find(webAppId);
    if (!id) return [];
    const running = (await this.tasks(id)).filter((t) => t.DesiredState === 'running' && t.Status?.State === 'running');
    return this.addresses(running, port);
  }

  /** Whether the Web App's service has a running task. */
  async running(webAppId: string): Promise<boolean> {
    const id = await this.find(webAppId);
    return id !== undefined && (await this.tasks(id)).some((t) => t.DesiredState === 'running' && t.Status?.State === 'running');
  }

  /** Sets how many tasks the Web App's service runs (0 stops it: stopWebApp). @returns false when it has no service. */
  async scale(webAppId: string, replicas: number): Promise<boolean> {
    const id = await this.find(webAppId);
    if (!id) return false;
    const info = await this.inspect(id);
    const spec = { ...info.Spec, Mode: { Replicated: { Replicas: replicas } } } as Docker.ServiceSpec;
    await this.update(id, info.Version?.Index ?? 0, spec, 'scale the service');
    return true;
  }

  /** The last `tail` rows of the output of the service's tasks (all of them: the engine keeps no split by deployment), in time order. */
  async logs(webAppId: string, tail: number): Promise<LogRow[]> {
    const id = await this.find(webAppId);
    if (!id) return [];
    const buffer: unknown = await engineStep(this.settings.dockerHost, 'read the service logs', REQUEST_MS, (abortSignal) =>
      this.docker.getService(id).logs({ stdout: true, stderr: true, timestamps: true, tail, follow: false, abortSignal } as object) as Promise<unknown>,
    );
    return parseContainerLogs(Buffer.isBuffer(buffer) ? buffer : Buffer.from(String(buffer)));
  }

  /**
   * Removes the Web App's service, waits (up to 30 s) until the engine removed its task containers,
   * then removes the account's overlay network and the reach network when no service of this home
   * uses them any more. Nothing of the app is left: no service, network or volume (it makes no volume).
   */
  async remove(webAppId: string, accountId: string): Promise<void> {
    const host = this.settings.dockerHost;
    const id = await this.find(webAppId);
    if (id) {
      await engineStep(host, 'remove the service', REQUEST_MS, async (abortSignal) => {
        try {
          await this.docker.getService(id).remove({ abortSignal } as object);
        } catch (error) {
          if (engineStatus(error) !== 404) throw error;
        }
      });
    }
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const left = await this.docker.listContainers({ all: true, filters: { label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_WEBAPP}=${webAppId}`, LABEL_TASK_DEPLOYMENT] } });
      if (left.length === 0) break;
      await sleep(POLL_MS);
    }
    const services = await this.homeServices();
    if (!services.some((s) => s.Spec?.Labels?.[LABEL_ACCOUNT] === accountId)) await this.removeNetwork(accountOverlayName(this.settings.home, accountId));
    if (services.length === 0) {
      await this.removeNetwork(reachNetworkName(this.settings.home));
      await this.removeNetwork(`${reachNetworkName(this.settings.home)}-config`);
    }
  }

  /** The id of the Web App's service, found by its labels; undefined when it has none (or the engine is no swarm manager). */
  async find(webAppId: string): Promise<string | undefined> {
    if (!(await this.active())) return undefined;
    const found = await engineStep(this.settings.dockerHost, 'look up the service', REQUEST_MS, (abortSignal) =>
      this.docker.listServices({ filters: { label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_HOME}=${this.settings.home}`, `${LABEL_WEBAPP}=${webAppId}`] }, abortSignal } as object),
    );
    return found[0]?.ID;
  }

  /** The services of this home's Web Apps. */
  async homeServices(): Promise<Docker.Service[]> {
    return engineStep(this.settings.dockerHost, 'list the services', REQUEST_MS, (abortSignal) =>
      this.docker.listServices({ filters: { label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_HOME}=${this.settings.home}`] }, abortSignal } as object),
    );
  }

  private inspect(id: string): Promise<ServiceInfo> {
    return engineStep(this.settings.dockerHost, 'inspect the service', REQUEST_MS, (abortSignal) => this.docker.getService(id).inspect({ abortSignal } as object)) as Promise<
      ServiceInfo
    >;
  }

  private async update(id: string, version: number, spec: Docker.ServiceSpec, doing: string): Promise<void> {
    await engineStep(this.settings.dockerHost, doing, REQUEST_MS, (abortSignal) => (this.docker.getService(id) as unknown as ServiceUpdater).update(undefined, { _query: { version }, _body: spec, abortSignal }));
  }

  private async tasks(serviceId: string): Promise<Task[]> {
    return (await engineStep(this.settings.dockerHost, "list the service's tasks", REQUEST_MS, (abortSignal) =>
      this.docker.listTasks({ filters: { service: [serviceId] }, abortSignal } as object),
    )) as Task[];
  }

  /** The reach addresses of tasks' containers (a task whose container has none yet is left out). */
  private async addresses(tasks: Task[], port: number): Promise<TaskTarget[]> {
    const reach = reachNetworkName(this.settings.home);
    const targets: TaskTarget[] = [];
    for (const task of tasks) {
      const containerId = task.Status?.ContainerStatus?.ContainerID;
      if (!containerId) continue;
      try {
        const info = await this.docker.getContainer(containerId).inspect();
        const ip = info.NetworkSettings?.Networks?.[reach]?.IPAddress;
        if (ip) targets.push({ taskId: task.ID, containerId, deploymentId: task.Spec?.ContainerSpec?.Labels?.[LABEL_TASK_DEPLOYMENT] ?? '', ip, port });
      } catch {
        // Gone between the listing and the inspection.
      }
    }
    return targets;
  }

  /** Creates a network for the services unless one of that name exists (409: another process made it meanwhile). */
  private async ensureNetwork(name: string, options: Partial<Docker.NetworkCreateOptions> & { Scope?: string; ConfigOnly?: boolean; ConfigFrom?: { Network: string } }, labels: Record<string, string> | undefined, abortSignal: AbortSignal): Promise<void> {
    const existing = await this.docker.listNetworks({ filters: { name: [name] }, abortSignal } as object);
    if (existing.some((n) => n.Name === name)) return;
    try {
      await this.docker.createNetwork({ Name: name, CheckDuplicate: true, ...(labels ? { Labels: labels } : {}), ...options, abortSignal } as Docker.NetworkCreateOptions);
    } catch (error) {
      if (engineStatus(error) !== 409 && !/already exists/i.test(engineMessage(error))) throw error;
    }
  }

  /** Removes a network of the services (named by labels.ts), leaving one still in use (or already gone). */
  private async removeNetwork(name: string): Promise<void> {
    // By name: the reach network itself carries no labels (see `deploy`).
    const found = await this.docker.listNetworks({ filters: { name: [name] } });
    for (const network of found.filter((n) => n.Name === name)) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          await this.docker.getNetwork(network.Id).remove();
          break;
        } catch (error) {
          const status = engineStatus(error);
          if (status === 404) break;
          // The engine lets go of a removed task's endpoints a moment after its container goes.
          if (Date.now() > deadline) break;
          await sleep(POLL_MS * 2);
        }
      }
    }
  }
}

/** The parts of an Engine API `Service` (inspected) read here. */
interface ServiceInfo {
  ID: string;
  Version?: { Index?: number };
  Spec: Docker.ServiceSpec;
}

/** dockerode's `Service.update(auth, options)`: `_query` is the query string, `_body` the body (docker-modem). */
interface ServiceUpdater {
  update(auth: undefined, options: { _query: object; _body: object; abortSignal: AbortSignal }): Promise<unknown>;
}

/** The parts of an Engine API `Task` read here. */
interface Task {
  ID: string;
  DesiredState?: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  Status?: { State?: string; Message?: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
}

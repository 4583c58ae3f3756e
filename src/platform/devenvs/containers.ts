import type Docker from 'dockerode';
import type { Logger } from '../../log.js';
import { ENGINE_TIMEOUTS, engineCall, engineStatus, type DockerClient } from './engine.js';
import { CONTAINER_HOST_ENTRY } from './hostGateway.js';
import type { ImageProvider } from './image.js';
import { containerName, environmentFilter, environmentLabels, volumeName } from './labels.js';
import { PER_ACCOUNT } from '../../settings.js';
import type { AccountNetworks } from './networks.js';

/** Container settings of development environments (Config: BACKYARD_DEVENV_*). */
export interface ContainerSettings {
  /** Absolute `BACKYARD_HOME`, written into a label. */
  home: string;
  dockerHost: string | undefined;
  image: string;
  memoryMb: number;
  cpus: number;
  pids: number;
  /**
   * `per-account` (`PER_ACCOUNT`, the default): each account's environments on the account's own
   * network (networks.ts); else a Docker network (`bridge`, `none`, a name) that every account shares.
   */
  network: string;
}

/**
 * The capabilities a development environment keeps; every other one is dropped (docs/design.md,
 * "Security stance"). Enough for a root user to install packages (file ownership and modes) and run
 * servers on low ports; no raw sockets, device nodes, chroot, audit or capability changes.
 */
export const KEPT_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'NET_BIND_SERVICE'] as const;

/**
 * The confinement every container Backyard runs gets (docs/design.md, "Security stance"): an init process,
 * not privileged, all capabilities dropped but `KEPT_CAPABILITIES`, no new privileges, a memory limit
 * without extra swap (`memoryBytes`), a CPU limit (`cpus`, fractions allowed) and a process limit.
 */
export const confinedHostConfig = (limits: { memoryBytes: number; cpus: number; pids: number }) => ({
  Init: true,
  Privileged: false,
  CapDrop: ['ALL'],
  CapAdd: [...KEPT_CAPABILITIES],
  SecurityOpt: ['no-new-privileges'],
  Memory: limits.memoryBytes,
  MemorySwap: limits.memoryBytes,
  NanoCpus: Math.round(limits.cpus * 1e9),
  PidsLimit: limits.pids,
});

/** Where the environment's named volume is mounted, and the working folder of every command. */
export const WORKSPACE = '/workspace';

/**
 * The Engine API body that creates an environment's container: one long-lived
 * container with an init process, labels for account and environment, `/workspace` on a named volume,
 * not privileged, capabilities dropped, no new privileges, no host mounts, memory (without extra swap),
 * CPU and process limits, and `network`: the account's own network, or the one the operator set for
 * all (`ContainerSettings.network`).
 */
export function containerSpec(settings: ContainerSettings, accountId: string, environmentId: string, network: string): Docker.ContainerCreateOptions {
  const memory = settings.memoryMb * 1024 * 1024;
  return {
    name: containerName(environmentId),
    Image: settings.image,
    // The long-lived main process; commands run beside it as execs. The init process forwards signals and reaps.
    Cmd: ['sleep', 'infinity'],
    WorkingDir: WORKSPACE,
    Labels: environmentLabels(settings.home, accountId, environmentId),
    HostConfig: {
      ...confinedHostConfig({ memoryBytes: memory, cpus: settings.cpus, pids: settings.pids }),
      NetworkMode: network,
      // `backyard.internal` is the host, where Backyard answers containers (hostGateway.ts).
      ExtraHosts: [CONTAINER_HOST_ENTRY],
      Mounts: [{ Type: 'volume', Source: volumeName(environmentId), Target: WORKSPACE }],
      RestartPolicy: { Name: 'unless-stopped' },
    },
  };
}

/**
 * Finds, creates and starts the containers of development environments, by labels (style.md,
 * example 12). Remembers the container of each environment it has seen running, so that a command
 * costs no lookup; `forget` drops that when the engine says the container stopped or is gone.
 */
export class EnvironmentContainers {
  private known = new Map<string, Docker.Container>();
  private pending = new Map<string, Promise<Docker.Container>>();

  constructor(
    private readonly docker: DockerClient,
    private readonly settings: ContainerSettings,
    private readonly images: ImageProvider,
    private readonly networks: AccountNetworks,
    private readonly log: Logger,
  ) {}

  /**
   * Creates and starts the container (and its volume) of a new environment.
   * @throws ManagementError(unavailable) when the engine is unreachable, the image cannot be had or
   *   the engine refuses; nothing is left behind then.
   * @returns the image the container runs (`ImageProvider.ensure`: the configured one or Backyard's offline one).
   */
  async create(accountId: string, environmentId: string): Promise<string> {
    const image = await this.images.ensure();
    try {
      const container = await this.createContainer(accountId, environmentId, image);
      await this.start(accountId, container);
      this.known.set(environmentId, container);
      return image;
    } catch (error) {
      await this.remove(accountId, environmentId);
      throw error;
    }
  }

  /**
   * The running container of an environment: started again if it stopped, created again (on the same
   * volume) if it was removed.
   * @throws ManagementError(unavailable) when the engine is unreachable or refuses.
   */
  async running(accountId: string, environmentId: string): Promise<Docker.Container> {
    const known = this.known.get(environmentId);
    if (known) return known;
    let pending = this.pending.get(environmentId);
    if (!pending) {
      pending = this.findOrCreate(accountId, environmentId).finally(() => this.pending.delete(environmentId));
      this.pending.set(environmentId, pending);
    }
    return pending;
  }

  /**
   * The environment's container if it is running, with when it started; never starts or creates one.
   * @throws ManagementError(unavailable) when the engine is unreachable or refuses.
   */
  async ifRunning(accountId: string, environmentId: string): Promise<{ container: Docker.Container; startedAt: number } | undefined> {
    const dockerHost = this.settings.dockerHost;
    const found = await engineCall(dockerHost, 'look up the development environment', ENGINE_TIMEOUTS.request, (abortSignal) =>
      this.docker.listContainers({ filters: environmentFilter(accountId, environmentId), abortSignal }),
    );
    if (!found[0]) return undefined;
    const container = this.docker.getContainer(found[0].Id);
    const info = await engineCall(dockerHost, 'inspect the development environment', ENGINE_TIMEOUTS.request, (abortSignal) =>
      container.inspect({ abortSignal }),
    );
    return info.State.Running ? { container, startedAt: Date.parse(info.State.StartedAt) } : undefined;
  }

  /** Forgets the remembered container (it stopped or is gone); the next `running` looks it up again. */
  forget(environmentId: string): void {
    this.known.delete(environmentId);
  }

  /**
   * Removes the environment's containers and its workspace volume for good (deleteDevelopmentEnvironment),
   * ignoring what is already gone.
   * @throws ManagementError(unavailable) when the engine is unreachable or refuses.
   */
  async destroy(accountId: string, environmentId: string): Promise<void> {
    this.forget(environmentId);
    await this.pending.get(environmentId)?.catch(() => undefined);
    const dockerHost = this.settings.dockerHost;
    const found = await engineCall(dockerHost, 'look up the development environment', ENGINE_TIMEOUTS.request, (abortSignal) =>
      this.docker.listContainers({ all: true, filters: environmentFilter(accountId, environmentId), abortSignal }),
    );
    const gone = (error: unknown) => {
      if (engineStatus(error) !== 404) throw error;
    };
    for (const c of found) {
      await engineCall(dockerHost, 'remove the development environment container', ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
        this.docker.getContainer(c.Id).remove({ force: true, v: false, abortSignal }).catch(gone),
      );
    }
    await engineCall(dockerHost, 'remove the workspace volume', ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
      this.docker.getVolume(volumeName(environmentId)).remove({ abortSignal }).catch(gone),
    );
    this.forget(environmentId);
    await this.release(accountId);
  }

  /** Kills and starts the environment's container again: the last resort to end a runaway command. */
  async restart(accountId: string, environmentId: string): Promise<void> {
    const container = await this.running(accountId, environmentId);
    this.forget(environmentId);
    await engineCall(this.settings.dockerHost, 'restart the development environment', ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
      container.restart({ t: 0, abortSignal }),
    );
    this.log.warn({ environmentId }, 'development environment container restarted');
  }

  private async findOrCreate(accountId: string, environmentId: string): Promise<Docker.Container> {
    const dockerHost = this.settings.dockerHost;
    const found = await engineCall(dockerHost, 'look up the development environment', ENGINE_TIMEOUTS.request, (abortSignal) =>
      this.docker.listContainers({ all: true, filters: environmentFilter(accountId, environmentId), abortSignal }),
    );
    let container: Docker.Container;
    const info = found[0];
    if (info) {
      container = this.docker.getContainer(info.Id);
      await this.adopt(accountId, info);
      if (info.State === 'paused') {
        await engineCall(dockerHost, 'unpause the development environment', ENGINE_TIMEOUTS.lifecycle, (abortSignal) => container.unpause({ abortSignal }));
      } else if (info.State !== 'running') {
        await this.start(accountId, container);
      }
    } else {
      this.log.info({ environmentId }, 'development environment container missing: creating it again on its volume');
      container = await this.createContainer(accountId, environmentId, await this.images.ensure());
      await this.start(accountId, container);
    }
    this.known.set(environmentId, container);
    return container;
  }

  private async createContainer(accountId: string, environmentId: string, image: string): Promise<Docker.Container> {
    const dockerHost = this.settings.dockerHost;
    const labels = environmentLabels(this.settings.home, accountId, environmentId);
    await engineCall(dockerHost, 'create the workspace volume', ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
      this.docker.createVolume({ Name: volumeName(environmentId), Labels: labels, abortSignal }),
    );
    const network = await this.network(accountId);
    return engineCall(dockerHost, 'create the development environment container', ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
      this.onNetwork(accountId, { abortSignal }, () => this.docker.createContainer({ ...containerSpec({ ...this.settings, image }, accountId, environmentId, network), abortSignal })),
    );
  }

  private async start(accountId: string, container: Docker.Container): Promise<void> {
    await engineCall(this.settings.dockerHost, 'start the development environment container', ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
      this.onNetwork(accountId, { abortSignal, containerId: container.id }, async () => {
        try {
          await container.start({ abortSignal });
        } catch (error) {
          if (engineStatus(error) !== 304) throw error; // 304: already started
        }
      }),
    );
  }

  private get perAccount(): boolean {
    return this.settings.network === PER_ACCOUNT;
  }

  /** The network of the account's environments: its own (created when missing), or the one set for all. */
  private async network(accountId: string): Promise<string> {
    if (!this.perAccount) return this.settings.network;
    return engineCall(this.settings.dockerHost, "create the account's network", ENGINE_TIMEOUTS.lifecycle, (abortSignal) => this.networks.ensure(accountId, abortSignal));
  }

  /** Runs an engine action on the account's own network, repairing that network when the engine says it is gone (`AccountNetworks.repairing`). */
  private onNetwork<T>(accountId: string, options: { abortSignal: AbortSignal; containerId?: string }, action: () => Promise<T>): Promise<T> {
    return this.perAccount ? this.networks.repairing(accountId, action, options) : action();
  }

  /** Moves a container made before accounts had networks of their own onto its account's network (per-account mode only). */
  private async adopt(accountId: string, info: Docker.ContainerInfo): Promise<void> {
    if (!this.perAccount) return;
    const attached = Object.keys(info.NetworkSettings?.Networks ?? {});
    try {
      await engineCall(this.settings.dockerHost, "move the development environment onto its account's network", ENGINE_TIMEOUTS.lifecycle, (abortSignal) =>
        this.networks.adopt(accountId, info.Id, attached, abortSignal),
      );
    } catch (error) {
      // The environment keeps working where it is; the next Backyard start tries again.
      this.log.warn({ err: error, containerId: info.Id }, "could not move a development environment onto its account's network");
    }
  }

  /** Removes an environment's container and volume, ignoring what is already gone (clean-up after a failed create). */
  private async remove(accountId: string, environmentId: string): Promise<void> {
    this.forget(environmentId);
    try {
      const found = await this.docker.listContainers({ all: true, filters: environmentFilter(accountId, environmentId) });
      for (const c of found) await this.docker.getContainer(c.Id).remove({ force: true, v: false });
      await this.docker.getVolume(volumeName(environmentId)).remove();
    } catch (error) {
      this.log.warn({ err: error, environmentId }, 'could not clean up after a failed development environment creation');
    }
    await this.release(accountId);
  }

  /** Removes the account's own network when its last container went, giving its subnet back (`AccountNetworks.release`; never throws). */
  private async release(accountId: string): Promise<void> {
    if (!this.perAccount) return; // environments were not on it: the account's Web Apps release it
    await engineCall(this.settings.dockerHost, "remove the account's network", ENGINE_TIMEOUTS.lifecycle, (abortSignal) => this.networks.release(accountId, abortSignal)).catch(
      (error: unknown) => this.log.warn({ err: error, accountId }, "could not remove the account's network"),
    );
  }
}

import type Docker from 'dockerode';
import { confinedHostConfig } from '../devenvs/containers.js';
import { engineStatus, type DockerClient } from '../devenvs/engine.js';
import type { AccountNetworks } from '../devenvs/networks.js';
import { engineStep } from './engine.js';
import { parseContainerLogs } from './logs.js';
import { KIND_WEBAPP, LABEL_ACCOUNT, LABEL_DEPLOYMENT, LABEL_KIND, LABEL_WEBAPP, deploymentFilter, webAppHomeFilter } from './labels.js';
import type { LogRow } from './store.js';

/** Limits of Web App containers (Config: BACKYARD_WEBAPP_MEMORY_MB, BACKYARD_WEBAPP_CPUS). */
export interface RunnerSettings {
  dockerHost: string | undefined;
  memoryMb: number;
  cpus: number;
}

/** What one deployment's container runs. */
export interface RunSpec {
  /** The account that owns the Web App: its container joins that account's network. */
  accountId: string;
  name: string;
  image: string;
  /** The port the app listens on inside the container. */
  port: number;
  /** `KEY=value` pairs: never logged. */
  env: string[];
  labels: Record<string, string>;
}

/** A deployment's container as the engine sees it. */
export interface ContainerState {
  id: string;
  running: boolean;
  restarting: boolean;
  restartCount: number;
  exitCode: number;
  oomKilled: boolean;
  /** The loopback port the container port is published on, while it runs. */
  hostPort: number | undefined;
}

/** A Web App container of a home, as `listHome` finds it. */
export interface HomeContainer {
  id: string;
  deploymentId: string;
  accountId: string;
  /** Names of the networks it is on. */
  networks: string[];
}

/** Time-outs of single engine requests, in milliseconds. */
const REQUEST_MS = 30_000;
const LIFECYCLE_MS = 60_000;
/** Process limit of a Web App container. */
const PIDS = 1024;

/**
 * The Engine API body of a deployment's container: the image with the Web App's
 * environment variables, the port published on 127.0.0.1 only (a free port chosen by the engine),
 * memory (no extra swap) and CPU limits, restart policy `unless-stopped` (so it comes back with the
 * engine), labels, on `network`: its account's own network, where no other account's container
 * reaches it; not privileged, capabilities dropped, no new privileges, no host mounts
 * (docs/design.md, "Security stance").
 */
export function runSpec(settings: RunnerSettings, spec: RunSpec, network: string): Docker.ContainerCreateOptions {
  const memory = settings.memoryMb * 1024 * 1024;
  const port = `${spec.port}/tcp`;
  return {
    name: spec.name,
    Image: spec.image,
    Env: spec.env,
    Labels: spec.labels,
    ExposedPorts: { [port]: {} },
    HostConfig: {
      NetworkMode: network,
      PortBindings: { [port]: [{ HostIp: '127.0.0.1', HostPort: '' }] },
      ...confinedHostConfig({ memoryBytes: memory, cpus: settings.cpus, pids: PIDS }),
      RestartPolicy: { Name: 'unless-stopped' },
    },
  };
}

/**
 * Runs, finds (by label), reads and retires deployment containers on the Docker engine, each on its
 * account's network (devenvs/networks.ts). Every call has a time-out and fails with a DeployError
 * whose text says what failed.
 */
export class ContainerRunner {
  constructor(
    private readonly docker: DockerClient,
    private readonly settings: RunnerSettings,
    private readonly networks: AccountNetworks,
  ) {}

  /** Creates and starts the container, on its account's network (created when missing). @returns its id. */
  async run(spec: RunSpec): Promise<string> {
    const host = this.settings.dockerHost;
    const { accountId } = spec;
    const network = await engineStep(host, "create the account's network", LIFECYCLE_MS, (abortSignal) => this.networks.ensure(accountId, abortSignal));
    const container = await engineStep(host, 'create the container', LIFECYCLE_MS, (abortSignal) =>
      this.networks.repairing(accountId, () => this.docker.createContainer({ ...runSpec(this.settings, spec, network), abortSignal } as Docker.ContainerCreateOptions), { abortSignal }),
    );
    await engineStep(host, 'start the container', LIFECYCLE_MS, (abortSignal) =>
      this.networks.repairing(accountId, () => container.start({ abortSignal }), { abortSignal, containerId: container.id }),
    );
    return container.id;
  }

  /** The container's state and published port. @throws DeployError when it is gone or the engine fails. */
  async state(containerId: string, port: number): Promise<ContainerState> {
    const info = await engineStep(this.settings.dockerHost, 'inspect the container', REQUEST_MS, (abortSignal) =>
      this.docker.getContainer(containerId).inspect({ abortSignal } as object),
    );
    const binding = info.NetworkSettings?.Ports?.[`${port}/tcp`]?.find((b) => b.HostIp === '127.0.0.1') ?? info.NetworkSettings?.Ports?.[`${port}/tcp`]?.[0];
    const hostPort = binding?.HostPort ? Number(binding.HostPort) : undefined;
    return {
      id: info.Id,
      running: info.State.Running && !info.State.Restarting,
      restarting: info.State.Restarting,
      restartCount: info.RestartCount ?? 0,
      exitCode: info.State.ExitCode,
      oomKilled: info.State.OOMKilled,
      hostPort,
    };
  }

  /** The id of a deployment's container, found by its label; undefined when there is none. */
  async find(deploymentId: string): Promise<string | undefined> {
    const found = await engineStep(this.settings.dockerHost, 'look up the container', REQUEST_MS, (abortSignal) =>
      this.docker.listContainers({ all: true, filters: deploymentFilter(deploymentId), abortSignal } as object),
    );
    return found[0]?.Id;
  }

  /** The ids of every container of one Web App, running or not (found by its label). */
  async listApp(webAppId: string): Promise<string[]> {
    const found = await engineStep(this.settings.dockerHost, 'list the Web App containers', REQUEST_MS, (abortSignal) =>
      this.docker.listContainers({ all: true, filters: { label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_WEBAPP}=${webAppId}`] }, abortSignal } as object),
    );
    return found.map((c) => c.Id);
  }

  /**
   * Every Web App container of the Backyard home `home`, running or not, with its deployment id, its
   * account (from its labels) and the names of the networks it is on.
   */
  async listHome(home: string): Promise<HomeContainer[]> {
    const found = await engineStep(this.settings.dockerHost, 'list the Web App containers', REQUEST_MS, (abortSignal) =>
      this.docker.listContainers({ all: true, filters: webAppHomeFilter(home), abortSignal } as object),
    );
    return found
      .map((c) => ({
        id: c.Id,
        deploymentId: c.Labels?.[LABEL_DEPLOYMENT] ?? '',
        accountId: c.Labels?.[LABEL_ACCOUNT] ?? '',
        networks: Object.keys(c.NetworkSettings?.Networks ?? {}),
      }))
      .filter((c) => c.deploymentId !== '');
  }

  /**
   * Moves a container made before accounts had networks of their own (on `bridge`) onto its account's
   * network alone (`AccountNetworks.adopt`). @returns whether it moved (its address changed then).
   */
  async adopt(container: HomeContainer): Promise<boolean> {
    return engineStep(this.settings.dockerHost, "move the container onto its account's network", LIFECYCLE_MS, (abortSignal) =>
      this.networks.adopt(container.accountId, container.id, container.networks, abortSignal),
    );
  }

  /** Starts a stopped container of `accountId` again (found by label after a restart), re-creating its network when it was removed. */
  async start(accountId: string, containerId: string): Promise<void> {
    await engineStep(this.settings.dockerHost, 'start the container', LIFECYCLE_MS, (abortSignal) =>
      this.networks.repairing(
        accountId,
        async () => {
          try {
            await this.docker.getContainer(containerId).start({ abortSignal });
          } catch (error) {
            if (engineStatus(error) !== 304) throw error; // 304: already running
          }
        },
        { abortSignal, containerId },
      ),
    );
  }

  /** The last `tail` rows of the container's output, in time order. */
  async logs(containerId: string, tail: number): Promise<LogRow[]> {
    const buffer: unknown = await engineStep(this.settings.dockerHost, 'read the container logs', REQUEST_MS, (abortSignal) =>
      this.docker.getContainer(containerId).logs({ stdout: true, stderr: true, timestamps: true, tail, follow: false, abortSignal }) as Promise<unknown>,
    );
    return parseContainerLogs(Buffer.isBuffer(buffer) ? buffer : Buffer.from(String(buffer)));
  }

  /** Stops a container (SIGTERM, then SIGKILL after `graceSeconds`), ignoring one already stopped or gone. */
  async stop(containerId: string, graceSeconds: number): Promise<void> {
    await engineStep(this.settings.dockerHost, 'stop the container', LIFECYCLE_MS + graceSeconds * 1000, async (abortSignal) => {
      try {
        await this.docker.getContainer(containerId).stop({ t: graceSeconds, abortSignal });
      } catch (error) {
        const status = engineStatus(error);
        if (status !== 304 && status !== 404) throw error;
      }
    });
  }

  /**
   * Removes the account's own network when its last container went, giving its subnet back to the pool
   * (`AccountNetworks.release`). Never throws: a network that stays goes at the account's next release.
   */
  async release(accountId: string): Promise<void> {
    await engineStep(this.settings.dockerHost, "remove the account's network", LIFECYCLE_MS, (abortSignal) => this.networks.release(accountId, abortSignal)).catch(() => undefined);
  }

  /** Removes a container by force, ignoring one that is gone. */
  async remove(containerId: string): Promise<void> {
    await engineStep(this.settings.dockerHost, 'remove the container', LIFECYCLE_MS, async (abortSignal) => {
      try {
        await this.docker.getContainer(containerId).remove({ force: true, abortSignal });
      } catch (error) {
        const status = engineStatus(error);
        if (status !== 404 && status !== 409) throw error; // 409: removal already in progress
      }
    });
  }
}

import net from 'node:net';
import { eachEventLine } from './eventLines.js';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import type { Logger } from '../../log.js';
import { LABEL_DEPLOYMENT, webAppHomeFilter } from './labels.js';

/** How long a reachability probe of a container address may take, in milliseconds. */
const PROBE_MS = 500;
/** Wait before following the engine's events again after the stream ended, in milliseconds. */
const RETRY_MS = 2_000;

/** One container's address on its network, as the proxy would connect to it. */
export interface ContainerAddress {
  /** The container's IP address on its account's network (devenvs/networks.ts), e.g. `172.18.0.3`. */
  ip: string;
  /** The port the app listens on inside the container. */
  port: number;
}

/**
 * Whether a TCP connection to `ip:port` reaches a host: it connects, or is refused (the host
 * answered; the app may not listen yet). A time-out or an unreachable network means the address
 * cannot be reached from here (Docker Desktop's VM, a remote engine).
 */
export function reachable(ip: string, port: number, timeoutMs = PROBE_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

interface EngineEvent {
  Type?: string;
  Action?: string;
  status?: string;
  Actor?: { Attributes?: Record<string, string> };
}

/**
 * The IP address of a listed container on the network it was created on (`HostConfig.NetworkMode`:
 * its account's network), else on the first network that gave it one; undefined when it has none.
 */
export function networkAddress(container: Docker.ContainerInfo): string | undefined {
  const networks = container.NetworkSettings?.Networks ?? {};
  const own = networks[container.HostConfig?.NetworkMode ?? '']?.IPAddress;
  return own || Object.values(networks).map((n) => n.IPAddress).find((a) => a);
}

/**
 * The addresses of this home's Web App containers on their accounts' networks, so that the
 * proxy connects to a container directly instead of through the engine's userland proxy behind the
 * published loopback port: one process and one TCP connection less per request (bench/webapps).
 *
 * An address is trusted only while the engine's event stream is followed: a container that stops
 * loses its entry as soon as its `die` event arrives (before another container can be given its
 * IP), every `start` refreshes the table from one `listContainers` call, and when the stream ends
 * (engine restart) the table empties until it is followed again, so the proxy falls back to the
 * published loopback port. An address that cannot be reached from this process (a Docker Desktop
 * VM, a remote engine) is never used.
 */
export class ContainerAddresses {
  private readonly byDeployment = new Map<string, ContainerAddress>();
  /** Addresses found unreachable, by `ip:port`, so they are not probed again. */
  private readonly unreachable = new Set<string>();
  /** Deployments whose container died and has not started since: a listing taken before the death must not bring them back. */
  private readonly dead = new Set<string>();
  private stream: NodeJS.ReadableStream | undefined;
  private retry: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly docker: Docker,
    private readonly home: string,
    private readonly log: Logger,
  ) {}

  /** Starts following the engine's container events; returns at once. */
  start(): void {
    if (!this.stream && !this.retry && !this.closed) void this.follow();
  }

  /** The address of a deployment's running container, when known and reachable. */
  get(deploymentId: string): ContainerAddress | undefined {
    return this.byDeployment.get(deploymentId);
  }

  /** Drops a deployment's address (its container did not answer there); the next refresh may bring it back. */
  forget(deploymentId: string): void {
    this.byDeployment.delete(deploymentId);
    this.schedule();
  }

  /** Resolves once the table reflects the engine as it is now (tests; after a deployment starts). */
  async settle(): Promise<void> {
    while (this.refreshing) await this.refreshing;
  }

  /** Stops following the engine; every address is forgotten. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.stream?.removeAllListeners();
    (this.stream as { destroy?: () => void } | undefined)?.destroy?.();
    this.stream = undefined;
    this.byDeployment.clear();
  }

  private async follow(): Promise<void> {
    this.retry = undefined;
    try {
      const stream = await this.docker.getEvents({ filters: { type: ['container'], event: ['start', 'die', 'destroy'] } });
      if (this.closed) return (stream as { destroy?: () => void }).destroy?.();
      this.stream = stream;
      eachEventLine(stream as unknown as Readable, (line) => this.onEvent(line));
      const ended = () => {
        if (this.stream !== stream) return;
        this.stream = undefined;
        this.byDeployment.clear();
        if (!this.closed) this.retry = setTimeout(() => void this.follow(), RETRY_MS).unref();
      };
      stream.once('end', ended);
      stream.once('close', ended);
      stream.once('error', ended);
      this.schedule();
    } catch (error) {
      this.log.debug({ message: (error as Error).message }, 'cannot follow the engine events; Web Apps are reached on their loopback ports');
      if (!this.closed) this.retry = setTimeout(() => void this.follow(), RETRY_MS).unref();
    }
  }

  private onEvent(line: string): void {
    let event: EngineEvent;
    try {
      event = JSON.parse(line) as EngineEvent;
    } catch {
      return;
    }
    const action = event.Action ?? event.status;
    const deploymentId = event.Actor?.Attributes?.[LABEL_DEPLOYMENT];
    if (deploymentId && action !== 'start') {
      // At once, before the IP can go to another container.
      this.byDeployment.delete(deploymentId);
      this.dead.add(deploymentId);
    }
    if (action === 'start') {
      if (deploymentId) this.dead.delete(deploymentId);
      this.schedule();
    }
  }

  /** Runs a refresh, or one more after the one running (events may arrive during it). */
  private schedule(): void {
    if (this.closed || !this.stream) return;
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = this.refresh()
      .catch((error: unknown) => {
        this.byDeployment.clear();
        this.log.debug({ message: (error as Error).message }, 'could not list Web App containers');
      })
      .finally(() => {
        this.refreshing = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  private async refresh(): Promise<void> {
    // This listing is taken after these deaths, so it is right about them; later deaths stay marked.
    const diedBefore = [...this.dead];
    const containers = await this.docker.listContainers({ filters: webAppHomeFilter(this.home) });
    const next = new Map<string, ContainerAddress>();
    for (const c of containers) {
      const deploymentId = c.Labels?.[LABEL_DEPLOYMENT];
      const ip = networkAddress(c);
      const port = c.Ports?.find((p) => p.PublicPort && p.PrivatePort)?.PrivatePort;
      if (!deploymentId || !ip || !port) continue;
      const key = `${ip}:${port}`;
      if (this.unreachable.has(key)) continue;
      if (this.byDeployment.get(deploymentId)?.ip !== ip && !(await reachable(ip, port))) {
        this.unreachable.add(key);
        this.log.info({ deploymentId, ip }, 'Web App container not reachable on its network address; using its loopback port');
        continue;
      }
      next.set(deploymentId, { ip, port });
    }
    if (this.closed || !this.stream) return;
    this.byDeployment.clear();
    for (const id of diedBefore) this.dead.delete(id);
    for (const [id, address] of next) if (!this.dead.has(id)) this.byDeployment.set(id, address);
  }
}

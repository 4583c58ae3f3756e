import type Docker from 'dockerode';
import { unavailable, type ManagementError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { engineMessage, engineStatus, type DockerClient } from './engine.js';
import { LABEL_HOME, LABEL_KIND, KIND_NETWORK, accountNetworkName, networkLabels } from './labels.js';

/**
 * True when the engine refused to start a container because its network is missing ("network X not
 * found": removed by hand) or ambiguous ("network X is ambiguous": two of that name, created at once
 * by two processes). `AccountNetworks.repairing` mends either.
 */
export function isNetworkFault(error: unknown): boolean {
  return /network \S+ (not found|is ambiguous)/i.test(engineMessage(error));
}

/**
 * The user-defined bridge network of each account of one Backyard home, created on demand: the
 * containers of one account reach each other on it, and Docker's isolation between bridge networks
 * keeps different accounts' containers apart (design.md, "Security stance": no network path between
 * different accounts' containers). A Web App is reached by others only through Backyard's proxy.
 *
 * Named by `accountNetworkName`, labelled by `networkLabels`. One process creates a network once at a
 * time (callers share the creation); a create that loses a race with another process is answered 409
 * and taken as done; duplicates that Docker 20.10 lets two simultaneous creates make are removed, the
 * oldest kept. Networks stay while Backyard runs; operators and tests remove a home's networks by
 * `networkHomeFilter`.
 *
 * Engine failures are thrown as the engine raised them, for the caller's own error mapping (engineCall
 * of development environments, engineStep of Web Apps), except an engine with no address pool left,
 * which is a ManagementError(unavailable) saying what to change.
 */
export class AccountNetworks {
  /** Names known to exist since this process created or found them; dropped by `forget`. */
  private readonly ready = new Set<string>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(
    private readonly docker: DockerClient,
    /** Absolute `BACKYARD_HOME`. */
    private readonly home: string,
    private readonly log: Logger,
  ) {}

  /** The name of the account's network (whether or not it exists yet). */
  nameOf(accountId: string): string {
    return accountNetworkName(this.home, accountId);
  }

  /**
   * The name of the account's network, created first when it does not exist.
   * @throws the engine's error when it fails; ManagementError(unavailable) when it has no address pool left.
   */
  async ensure(accountId: string, abortSignal?: AbortSignal): Promise<string> {
    const name = this.nameOf(accountId);
    if (this.ready.has(name)) return name;
    let pending = this.pending.get(name);
    if (!pending) {
      pending = this.converge(name, accountId, abortSignal).finally(() => this.pending.delete(name));
      this.pending.set(name, pending);
    }
    return pending;
  }

  /** Forgets that the account's network exists (the engine said it does not): the next `ensure` looks again. */
  forget(accountId: string): void {
    this.ready.delete(this.nameOf(accountId));
  }

  /**
   * Runs `action` (creating a container on the account's network, or starting `containerId`); when the
   * engine answers that the network is missing or ambiguous (`isNetworkFault`: removed by hand, created
   * twice), makes it exist once more, attaches `containerId` to it again (a container that has run
   * remembers its network by id, which a network made again under the same name does not have), and
   * runs `action` again, once.
   * @throws what `action` or `ensure` throw, and the engine's error when it refuses to attach the container.
   */
  async repairing<T>(accountId: string, action: () => Promise<T>, options: { containerId?: string; abortSignal?: AbortSignal } = {}): Promise<T> {
    const { containerId, abortSignal } = options;
    try {
      return await action();
    } catch (error) {
      if (!isNetworkFault(error)) throw error;
      this.log.warn({ accountId, network: this.nameOf(accountId), reason: engineMessage(error) }, 'account network missing: creating it again');
      this.forget(accountId);
      const name = await this.ensure(accountId, abortSignal);
      if (containerId) {
        const network = this.docker.getNetwork(name);
        await network.disconnect({ Container: containerId, Force: true, abortSignal }).catch(() => undefined); // the stale attachment, if any
        await network.connect({ Container: containerId, abortSignal } as Docker.NetworkConnectOptions);
      }
      return action();
    }
  }

  /**
   * Puts a container of the account that is on other networks (made before accounts had networks of
   * their own, on `bridge`, or on a network the operator set for all) onto the account's network
   * alone: connected there, then disconnected from the others; running or stopped, its processes and
   * files stay. A container on no network (`none`) is left so. `attached` is the names of the networks
   * the container is on now.
   * @returns whether the container was moved.
   * @throws what `ensure` throws, and the engine's error when it refuses to connect or disconnect.
   */
  async adopt(accountId: string, containerId: string, attached: string[], abortSignal?: AbortSignal): Promise<boolean> {
    const name = this.nameOf(accountId);
    if (attached.includes('none') || (attached.length === 1 && attached[0] === name)) return false;
    await this.ensure(accountId, abortSignal);
    if (!attached.includes(name)) await this.docker.getNetwork(name).connect({ Container: containerId, abortSignal } as Docker.NetworkConnectOptions);
    for (const other of attached.filter((n) => n !== name)) {
      await this.docker.getNetwork(other).disconnect({ Container: containerId, Force: true, abortSignal });
    }
    this.log.info({ accountId, containerId, network: name, from: attached }, "container moved onto its account's network");
    return true;
  }

  private async converge(name: string, accountId: string, abortSignal: AbortSignal | undefined): Promise<string> {
    let found = await this.named(name, abortSignal);
    if (found.length === 0) {
      try {
        await this.docker.createNetwork({ Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: networkLabels(this.home, accountId), abortSignal });
        this.log.info({ accountId, network: name }, 'account network created');
      } catch (error) {
        if (engineStatus(error) !== 409) throw poolExhausted(error) ?? error; // 409: another process created it meanwhile
      }
      found = await this.named(name, abortSignal);
    }
    for (const extra of found.sort(oldestFirst).slice(1)) {
      await this.docker
        .getNetwork(extra.Id)
        .remove({ abortSignal })
        .catch((error: unknown) => this.log.warn({ network: name, id: extra.Id, reason: engineMessage(error) }, 'could not remove a duplicate account network'));
    }
    this.ready.add(name);
    return name;
  }

  /** This home's account networks called exactly `name` (the engine's name filter matches parts of names). */
  private async named(name: string, abortSignal: AbortSignal | undefined): Promise<Docker.NetworkInspectInfo[]> {
    const listed = await this.docker.listNetworks({ filters: { name: [name], label: [`${LABEL_KIND}=${KIND_NETWORK}`, `${LABEL_HOME}=${this.home}`] }, abortSignal });
    return listed.filter((n) => n.Name === name);
  }
}

const oldestFirst = (a: Docker.NetworkInspectInfo, b: Docker.NetworkInspectInfo) => a.Created.localeCompare(b.Created) || a.Id.localeCompare(b.Id);

/** The engine's "no address pool left" refusal, said with what to change; undefined for any other error. */
function poolExhausted(error: unknown): ManagementError | undefined {
  const message = engineMessage(error);
  if (!/address pool/i.test(message)) return undefined;
  return unavailable(
    `The Docker engine could not create the network of this account's containers: ${message}. Each account gets a network of its own; ` +
      'give the engine more address pools ("default-address-pools" in its daemon.json), remove unused networks (docker network prune), ' +
      'or set BACKYARD_DEVENV_NETWORK to a network that the development environments of all accounts share.',
  );
}

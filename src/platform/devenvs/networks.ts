import type Docker from 'dockerode';
import { unavailable, type ManagementError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { DEFAULT_NETWORK_POOL, DEFAULT_SUBNET_PREFIX } from '../../settings.js';
import { cidrText, cidrsOverlap, ipv4Text, parseIpv4Cidr, type Ipv4Cidr } from '../../shared/cidr.js';
import { engineMessage, engineStatus, type DockerClient } from './engine.js';
import { LABEL_ACCOUNT, LABEL_HOME, LABEL_KIND, KIND_NETWORK, accountNetworkName, networkLabels } from './labels.js';
import { gatewayOf, pickSubnet, poolText, subnetCount, type AddressPool } from './subnets.js';

/** The pool of the settings' defaults (BACKYARD_NETWORK_POOL, BACKYARD_NETWORK_SUBNET_PREFIX), for callers given none. */
export const DEFAULT_POOL: AddressPool = { range: parseIpv4Cidr(DEFAULT_NETWORK_POOL)!, subnetPrefix: DEFAULT_SUBNET_PREFIX };

/**
 * How many subnets one create tries when the engine answers that each overlaps a network (taken by
 * another process between the listing and the create): with a random start, a loss is rare, and this
 * many in a row means the engine sees a use the listing does not show.
 */
const OVERLAP_ATTEMPTS = 8;

/** True when the engine refused a network because its subnet overlaps another's ("Pool overlaps with other one on this address space", libnetwork's ipam). */
const isOverlap = (error: unknown): boolean => /overlap/i.test(engineMessage(error));

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
 * keeps different accounts' containers apart (docs/design.md, "Security stance": no network path between
 * different accounts' containers). A Web App is reached by others only through Backyard's proxy.
 *
 * Named by `accountNetworkName`, labelled by `networkLabels`. One process creates a network once at a
 * time (callers share the creation); a create that loses a race with another process is answered 409
 * and taken as done; duplicates that Docker 20.10 lets two simultaneous creates make are removed, the
 * oldest kept. Operators and tests remove a home's networks by `networkHomeFilter`.
 *
 * Addresses: each network gets an explicit subnet of `pool` (BACKYARD_NETWORK_POOL), never one of the
 * engine's default address pools, which hold about 30 networks (Docker's `default-address-pools`:
 * 172.17–31.0.0/16 each, and 192.168.0.0/16 cut into /20s). The engine is the source of truth for what is free,
 * since several Backyard processes (and other software) may share it: every network it lists, made by
 * Backyard or not, takes its subnets out of the pool; a create that the engine refuses because another
 * process took the same subnet meanwhile ("overlaps") picks again. A network is removed (`release`)
 * when its account's last container goes, which gives its subnet back.
 *
 * Engine failures are thrown as the engine raised them, for the caller's own error mapping (engineCall
 * of development environments, engineStep of Web Apps), except a pool with no subnet left, which is a
 * ManagementError(unavailable) saying which variable to change.
 */
export class AccountNetworks {
  /** Names known to exist since this process created or found them; dropped by `forget`. */
  private readonly ready = new Set<string>();
  private readonly pending = new Map<string, Promise<string>>();
  /** Subnets (`cidrText`) this process is creating networks on right now: the listing does not show them yet. */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly docker: DockerClient,
    /** Absolute `BACKYARD_HOME`. */
    private readonly home: string,
    private readonly log: Logger,
    /** Where the networks' subnets come from (Config: BACKYARD_NETWORK_POOL, BACKYARD_NETWORK_SUBNET_PREFIX). */
    private readonly pool: AddressPool = DEFAULT_POOL,
  ) {}

  /** The name of the account's network (whether or not it exists yet). */
  nameOf(accountId: string): string {
    return accountNetworkName(this.home, accountId);
  }

  /**
   * The name of the account's network, created first when it does not exist (on a free subnet of the pool).
   * @throws the engine's error when it fails; ManagementError(unavailable) when no subnet of the pool is free.
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

  /**
   * Removes the account's network when no container of the account (development environment or Web
   * App, running or not: found by the home and account labels) is left, giving its subnet back to the
   * pool. Called after an account's container is removed. A container created for the account while
   * this runs is not lost: the engine refuses to remove a network that a running container is on, and a
   * container created but not yet started finds its network gone at the start, which `repairing` mends
   * (the network is made again, the container attached to it).
   * @returns whether a network was removed. Never throws: a failure is logged, and the network stays
   *   until the account's next release.
   */
  async release(accountId: string, abortSignal?: AbortSignal): Promise<boolean> {
    const name = this.nameOf(accountId);
    if (this.pending.has(name)) return false; // being made for a new container of this process
    try {
      const left = await this.docker.listContainers({ all: true, limit: 1, filters: { label: [`${LABEL_HOME}=${this.home}`, `${LABEL_ACCOUNT}=${accountId}`] }, abortSignal });
      if (left.length > 0) return false;
      // Forgotten first, so that a container created here meanwhile makes sure of the network again.
      this.forget(accountId);
      let removed = false;
      for (const network of await this.named(name, abortSignal)) {
        try {
          await this.docker.getNetwork(network.Id).remove({ abortSignal });
          removed = true;
        } catch (error) {
          // 404: removed meanwhile (another process's release); 403 "has active endpoints": a container joined meanwhile.
          if (engineStatus(error) !== 404 && !/active endpoints/i.test(engineMessage(error))) throw error;
        }
      }
      if (removed) this.log.info({ accountId, network: name }, "account network removed with the account's last container");
      return removed;
    } catch (error) {
      this.log.warn({ accountId, network: name, reason: engineMessage(error) }, 'could not remove an account network without containers');
      return false;
    }
  }

  private async converge(name: string, accountId: string, abortSignal: AbortSignal | undefined): Promise<string> {
    let found = await this.named(name, abortSignal);
    for (let attempt = 1; found.length === 0; attempt++) {
      const subnet = await this.freeSubnet(abortSignal);
      const key = cidrText(subnet);
      this.claimed.add(key);
      try {
        await this.docker.createNetwork({
          Name: name,
          Driver: 'bridge',
          CheckDuplicate: true,
          IPAM: { Driver: 'default', Config: [{ Subnet: key, Gateway: ipv4Text(gatewayOf(subnet)) }] },
          Labels: networkLabels(this.home, accountId),
          abortSignal,
        });
        this.log.info({ accountId, network: name, subnet: key }, 'account network created');
      } catch (error) {
        if (isOverlap(error)) {
          // Another process (or anyone) took the subnet since the listing: pick again, unless that keeps happening.
          if (attempt >= OVERLAP_ATTEMPTS) throw overlapsPersist(this.pool, attempt, error);
          this.log.debug({ accountId, network: name, subnet: key, reason: engineMessage(error) }, 'subnet taken meanwhile: picking another');
        } else if (engineStatus(error) !== 409) {
          throw error;
        } else if ((await this.named(name, abortSignal)).length === 0) {
          throw error; // 409 for a network of that name that is not this home's account network (made by hand): not ours to take
        } // else 409: another process created the network meanwhile
      } finally {
        this.claimed.delete(key);
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

  /**
   * A subnet of the pool that no network on the engine uses (whoever made it) and that this process is
   * not creating a network on, starting the search at a random subnet.
   * @throws ManagementError(unavailable) when none is free.
   */
  private async freeSubnet(abortSignal: AbortSignal | undefined): Promise<Ipv4Cidr> {
    const networks = await this.docker.listNetworks({ abortSignal });
    const taken = [...networks.flatMap(subnetsOf), ...[...this.claimed].map((c) => parseIpv4Cidr(c)!)];
    const subnet = pickSubnet(this.pool, taken, Math.floor(Math.random() * subnetCount(this.pool)));
    if (!subnet) throw poolExhausted(this.pool, taken.filter((t) => cidrsOverlap(t, this.pool.range)).length);
    return subnet;
  }

  /** This home's account networks called exactly `name` (the engine's name filter matches parts of names). */
  private async named(name: string, abortSignal: AbortSignal | undefined): Promise<Docker.NetworkInspectInfo[]> {
    const listed = await this.docker.listNetworks({ filters: { name: [name], label: [`${LABEL_KIND}=${KIND_NETWORK}`, `${LABEL_HOME}=${this.home}`] }, abortSignal });
    return listed.filter((n) => n.Name === name);
  }
}

const oldestFirst = (a: Docker.NetworkInspectInfo, b: Docker.NetworkInspectInfo) => a.Created.localeCompare(b.Created) || a.Id.localeCompare(b.Id);

/** The IPv4 subnets a listed network uses (IPv6 ones and networks without IPAM, such as host and none, have none). */
function subnetsOf(network: Docker.NetworkInspectInfo): Ipv4Cidr[] {
  return (network.IPAM?.Config ?? []).flatMap((c: { Subnet?: string }) => {
    const subnet = c.Subnet === undefined ? undefined : parseIpv4Cidr(c.Subnet, false);
    return subnet ? [subnet] : [];
  });
}

/** No subnet of the pool is free: said with what to change. */
function poolExhausted(pool: AddressPool, inPool: number): ManagementError {
  return unavailable(
    `No address range is free for this account's network: all ${subnetCount(pool)} subnets of BACKYARD_NETWORK_POOL (${poolText(pool)}) ` +
      `are used by networks on the Docker engine (${inPool} networks there use addresses of the pool). Each account gets a network of its own while it has containers; ` +
      'set BACKYARD_NETWORK_POOL to a larger range (or BACKYARD_NETWORK_SUBNET_PREFIX to a larger number, for smaller subnets), or remove networks that are no longer used (docker network prune).',
  );
}

/** The engine refused every subnet picked as overlapping another network, although its listing showed them free. */
function overlapsPersist(pool: AddressPool, attempts: number, error: unknown): ManagementError {
  return unavailable(
    `The Docker engine refused ${attempts} free-looking subnets of BACKYARD_NETWORK_POOL (${poolText(pool)}) for this account's network: ${engineMessage(error)}. ` +
      'Something on the engine uses addresses of the pool without listing them as a network; set BACKYARD_NETWORK_POOL to a range nothing else uses.',
  );
}

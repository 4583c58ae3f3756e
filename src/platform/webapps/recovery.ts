import type { Logger } from '../../log.js';
import type { ContainerAddresses } from './addresses.js';
import type { ImageBuilder } from './builder.js';
import { ownerGone } from '../devenvs/owners.js';
import { nowIso } from '../../shared/sqlite.js';
import { LABEL_ACCOUNT, LABEL_WEBAPP, imageTag } from './labels.js';
import { interruptedText } from './pipeline.js';
import type { ContainerRunner, HomeContainer } from './runner.js';
import type { SwarmServices } from './swarm.js';
import { UNFINISHED, type WebAppStore } from './store.js';

/** What recovery works with: the Web App service's parts, and whether the service closed. */
export interface WebAppRecoveryParts {
  store: WebAppStore;
  runner: ContainerRunner;
  builder: ImageBuilder;
  swarm: SwarmServices;
  addresses: ContainerAddresses;
  /** The Backyard home, whose containers (by their label) are this process's to sweep. */
  home: string;
  /** This process's owner id of deployments (devenvs/owners.ts). */
  owner: string;
  log: Logger;
  /** Whether the service closed: recovery then changes nothing more. */
  closed: () => boolean;
}

/**
 * How a Backyard process takes over the Web Apps it finds after a restart (its own, or a stopped
 * or crashed process's): deployments left unfinished read failed, active containers are found
 * again (the proxy asks for one that refused a connection), and what abandoned deployments left
 * behind is removed. Split from WebAppService (service.ts), which calls it.
 */
export class WebAppRecovery {
  private readonly store: WebAppStore;
  private readonly runner: ContainerRunner;
  private readonly builder: ImageBuilder;
  private readonly swarm: SwarmServices;
  private readonly addresses: ContainerAddresses;
  private readonly home: string;
  private readonly owner: string;
  private readonly log: Logger;
  private readonly closed: () => boolean;

  constructor(parts: WebAppRecoveryParts) {
    ({ store: this.store, runner: this.runner, builder: this.builder, swarm: this.swarm, addresses: this.addresses, home: this.home, owner: this.owner, log: this.log, closed: this.closed } = parts);
  }

  /** The proxy's call after a refused connection: the container's current loopback port, started again if it stopped. */
  async relocate(deploymentId: string): Promise<number | undefined> {
    const row = await this.store.deploymentById(deploymentId);
    const app = row && await this.store.appById(row.web_app_id);
    if (!row || !app || app.stopped === 1 || row.status !== 'active' || !row.container_port || row.service === 1) return undefined;
    const containerId = await this.runner.find(deploymentId);
    if (!containerId) return undefined;
    let state = await this.runner.state(containerId, row.container_port);
    if (!state.running && !state.restarting) {
      await this.runner.start(app.account_id, containerId);
      state = await this.runner.state(containerId, row.container_port);
    }
    if (!this.closed() && state.hostPort !== undefined && state.hostPort !== row.host_port) {
      await this.store.setHostPort(deploymentId, state.hostPort);
      this.log.info({ deploymentId, hostPort: state.hostPort }, 'web app container found again on a new port');
    }
    return state.hostPort;
  }

  /**
   * Deployments left unfinished by a Backyard that is gone (stopped or crashed)
   * read `failed` with a reason; their containers go at the next `start`'s sweep.
   */
  async reconcile(): Promise<void> {
    const now = nowIso();
    for (const row of await this.store.unfinished()) {
      if (!ownerGone(row.owner, row.heartbeat_at, this.owner)) continue;
      if (await this.store.finish(row.id, 'failed', interruptedText(row.status), now)) {
        this.log.info({ deploymentId: row.id, status: row.status }, 'deployment interrupted by a restart marked failed');
      }
    }
  }

  /** An active container made before accounts had networks of their own goes onto its account's network; the proxy forgets its old address. */
  private async adopt(container: HomeContainer): Promise<void> {
    try {
      if (await this.runner.adopt(container)) this.addresses.forget(container.deploymentId);
    } catch (error) {
      this.log.warn({ deploymentId: container.deploymentId, message: (error as Error).message }, "could not move a Web App container onto its account's network");
    }
  }

  /**
   * Finds the containers of active deployments again by their labels (starting one that stopped,
   * reading its current port, moving one made before accounts had networks of their own onto its
   * account's network), removes swarm services of deleted Web Apps, and removes containers (and
   * their images) left by abandoned deployments. WebAppService.start runs it in the background.
   */
  async sweep(): Promise<void> {
    for (const row of await this.store.activeDeployments()) {
      await this.relocate(row.id).catch((error: unknown) => this.log.warn({ deploymentId: row.id, message: (error as Error).message }, 'active web app container not found'));
    }
    // Services of Web Apps deleted while this process was not running (or whose removal failed).
    if (await this.swarm.active()) {
      for (const service of await this.swarm.homeServices()) {
        const labels = service.Spec?.Labels ?? {};
        const webAppId = labels[LABEL_WEBAPP];
        if (webAppId && !this.closed() && !(await this.store.appById(webAppId))) await this.swarm.remove(webAppId, labels[LABEL_ACCOUNT] ?? '').catch(() => undefined);
      }
    }
    // Containers of this home whose deployment is neither active nor still on its way: left by a stop or crash.
    const containers = await this.runner.listHome(this.home);
    for (const container of containers) {
      const { id, deploymentId } = container;
      const row = await this.store.deploymentById(deploymentId);
      const keep = row && (row.status === 'active' || (UNFINISHED.includes(row.status) && !ownerGone(row.owner, row.heartbeat_at, this.owner)));
      if (row?.status === 'active' && container.accountId !== '' && !this.closed()) await this.adopt(container);
      if (keep || this.closed()) continue;
      await this.runner.remove(id).catch(() => undefined);
      if (container.accountId !== '') await this.runner.release(container.accountId);
      const app = row && await this.store.appById(row.web_app_id);
      if (app) await this.builder.remove(imageTag(this.home, app.subdomain, deploymentId));
      this.log.info({ deploymentId }, 'removed the container of an abandoned deployment');
    }
  }
}

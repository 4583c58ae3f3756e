import type { Logger } from '../../log.js';
import type { Account } from '../accounts/service.js';
import type { PushEvent, RepoHostService } from '../repohost/service.js';
import { ZERO_SHA } from '../repohost/names.js';
import type { RepositorySources } from './source.js';
import type { WebAppRow, WebAppStore } from './store.js';

/** What auto-deploy asks of the Web App service: start a deployment of an app (recorded as queued at once). */
export type Deploy = (app: WebAppRow, trigger: 'push' | 'poll') => Promise<unknown>;

/**
 * Auto-deploy: with `autoDeploy`, a push to the Web App's branch starts a
 * deployment. For the built-in git host at once, from its in-process push event (fired before the
 * push's answer ends, so the deployment is queued by the time `git push` returns); for GitHub by
 * polling the branch head every `pollMs` (`git ls-remote` with an installation token).
 */
export class AutoDeploy {
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: WebAppStore,
    private readonly repoHost: RepoHostService,
    private readonly sources: RepositorySources,
    private readonly deploy: Deploy,
    private readonly log: Logger,
  ) {
    this.unsubscribe = repoHost.onPush((event) => this.onPush(event));
  }

  /** Starts polling GitHub branch heads every `pollMs`. */
  startPolling(pollMs: number): void {
    this.timer ??= setInterval(() => void this.pollOnce(), pollMs).unref();
  }

  /**
   * One round of the poller: each Web App with autoDeploy on a polled host whose branch head moved
   * since it was last seen gets a deployment. Rounds never overlap.
   * @param polled which apps are polled (default: those the repository host says are on GitHub).
   */
  async pollOnce(
    polled: (app: WebAppRow, account: Account) => boolean | Promise<boolean> = async (app, account) =>
      (await this.repoHost.hostFor(account, app.repository_owner_login)) === 'github',
  ): Promise<void> {
    this.polling ??= (async () => {
      for (const app of await this.store.autoDeployApps()) {
        const account = await this.store.account(app.account_id);
        if (!account || !(await polled(app, account))) continue;
        try {
          const head = await this.sources.headOf(account, { owner: app.repository_owner_login, repo: app.repository_name, branch: app.branch_name });
          if (head === undefined || head === app.last_seen_sha) continue;
          await this.store.setLastSeen(app.id, head);
          this.log.info({ webAppId: app.id, head }, 'branch head moved: deploying');
          await this.deploy(app, 'poll');
        } catch (error) {
          this.log.warn({ webAppId: app.id, message: (error as Error).message }, 'could not read the branch head for auto-deploy');
        }
      }
    })().finally(() => (this.polling = undefined));
    return this.polling;
  }

  /** Stops polling and listening to pushes. */
  close(): void {
    clearInterval(this.timer);
    this.unsubscribe();
  }

  private async onPush(event: PushEvent): Promise<void> {
    for (const update of event.refs) {
      if (!update.ref.startsWith('refs/heads/') || update.after === ZERO_SHA) continue;
      const branch = update.ref.slice('refs/heads/'.length);
      for (const app of await this.store.pushTargets(event.owner, event.repo, branch)) {
        const account = await this.store.account(app.account_id);
        // Built-in repositories belong to the account of the same login: only its own apps deploy them.
        if (!account || account.login.toLowerCase() !== event.owner.toLowerCase()) continue;
        if ((await this.repoHost.hostFor(account, app.repository_owner_login)) !== 'builtin') continue;
        await this.store.setLastSeen(app.id, update.after);
        this.log.info({ webAppId: app.id, commit: update.after }, 'push to the branch: deploying');
        await this.deploy(app, 'push');
      }
    }
  }
}

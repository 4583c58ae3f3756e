import type { CloudRuntime } from './cloud/types.js';
import type { WebhookStore } from './cloud/webhooks.js';
import type { JobScheduler } from './cloud/scheduler.js';
import type { Mailer } from './mail/mailer.js';
import type { SignInProviders } from './users/providers/catalog.js';
import type { OutboundClient } from '../shared/outbound/client.js';

/**
 * What the data API's routes reach besides an app's engine, keys and folders (those are `DataApps`,
 * apps.ts): one small context, declared here and built by the platform (src/platform/platform.ts),
 * whose `start` and `close` run the background work behind it (the scheduler's timer, the cloud
 * code workers). Constructing one starts nothing.
 */
export interface DataServices {
  /** The apps' cloud code, functions and triggers served by a webhook first (cloud/webhooks.ts `WebhookCloudRuntime`). */
  readonly cloud: CloudRuntime;
  /** The apps' webhooks (`/hooks`). */
  readonly webhooks: WebhookStore;
  /** Told when an app's job schedules change, so that it reads them again (cloud/scheduler.ts). */
  readonly scheduler: Pick<JobScheduler, 'changed'>;
  /** Sends the apps' mails (verification, password reset) and keeps them in each app's outbox (mail/). */
  readonly mailer: Mailer;
  /** Checks `authData` with the providers the apps' `auth` settings name (users/providers). */
  readonly signIn: SignInProviders;
  /**
   * How requests to addresses an app's configuration or its clients chose leave this server
   * (sign-in providers, webhooks, push services): public addresses only, but for the operator's
   * allowed `host:port` pairs (shared/outbound/client.ts).
   */
  readonly outbound: OutboundClient;
}

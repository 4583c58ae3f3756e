import webpush from 'web-push';
import type { PushSettings } from './options.js';
import type { Delivery } from './types.js';
import type { OutboundFetch } from '../../shared/outbound/client.js';

type WebSettings = NonNullable<PushSettings['web']>;

/**
 * Sends Web Push messages (RFC 8030) with VAPID (RFC 8292) and an encrypted payload (RFC 8291), the
 * request built by the `web-push` package and sent through Backyard's outbound client
 * (shared/outbound/client.ts): a subscription's endpoint comes from a client, so it must not lead
 * into the server's network; a push service answers where it is, so redirects are refused.
 * A web installation's `deviceToken` is its PushSubscription as JSON (`{endpoint, keys: {p256dh, auth}}`).
 */
export class WebPushSender {
  constructor(
    private readonly settings: WebSettings,
    private readonly fetch: OutboundFetch,
  ) {}

  async send(devices: ReadonlyArray<{ deviceToken: string; payload: string }>, ttlSeconds: number): Promise<Delivery[]> {
    return Promise.all(
      devices.map(async ({ deviceToken, payload }): Promise<Delivery> => {
        let subscription: webpush.PushSubscription;
        try {
          subscription = JSON.parse(deviceToken) as webpush.PushSubscription;
          if (typeof subscription.endpoint !== 'string' || typeof subscription.keys?.p256dh !== 'string' || typeof subscription.keys?.auth !== 'string') throw new Error('incomplete');
        } catch {
          return { ok: false, error: 'InvalidSubscription: the deviceToken is not a PushSubscription as JSON' };
        }
        try {
          const request = webpush.generateRequestDetails(subscription, payload, { vapidDetails: this.settings.vapidDetails, TTL: ttlSeconds, contentEncoding: 'aes128gcm' });
          // fetch sets the length itself, and refuses one given.
          const { 'Content-Length': _length, ...headers } = request.headers as Record<string, string>;
          const response = await this.fetch(request.endpoint, {
            method: request.method,
            headers,
            body: request.body ? new Uint8Array(request.body) : undefined,
            redirect: 'error',
            timeoutMs: 15_000,
            maxBytes: 64 * 1024,
          });
          await response.body?.cancel().catch(() => undefined);
          if (response.status >= 200 && response.status < 300) return { ok: true };
          return { ok: false, error: `HTTP ${response.status}${response.status === 404 || response.status === 410 ? ' (subscription gone)' : ''}` };
        } catch (error) {
          return { ok: false, error: (error as Error).message };
        }
      }),
    );
  }
}

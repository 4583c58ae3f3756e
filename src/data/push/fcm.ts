import { importPKCS8, SignJWT } from 'jose';
import type { PushSettings } from './options.js';
import type { Delivery } from './types.js';
import type { OutboundFetch } from '../../shared/outbound/client.js';

type AndroidSettings = NonNullable<PushSettings['android']>;

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
/** How long one exchange with Google may take, redirects and body included. */
const TIMEOUT_MS = 15_000;
/** A token or a send answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends through Firebase Cloud Messaging's HTTP v1 API (Google's "Migrate from legacy FCM APIs to
 * HTTP v1"): an OAuth 2 access token from the service account (an RS256 JWT assertion exchanged at
 * its `token_uri`, RFC 7523), then `POST /v1/projects/<project_id>/messages:send` per device.
 * Both addresses come from the app's settings, so they are reached through the outbound client:
 * redirects are followed only to addresses that pass its check (at most 3), like the first one.
 */
export class FcmSender {
  private access: { token: string; until: number } | undefined;

  constructor(
    private readonly settings: AndroidSettings,
    private readonly fetch: OutboundFetch,
  ) {}

  private async accessToken(): Promise<string> {
    if (this.access && Date.now() < this.access.until) return this.access.token;
    const account = this.settings.firebaseServiceAccount;
    const tokenUri = account.token_uri ?? 'https://oauth2.googleapis.com/token';
    const key = await importPKCS8(account.private_key, 'RS256');
    const assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(account.client_email)
      .setAudience(tokenUri)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key);
    const response = await this.fetch(tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_ANSWER_BYTES,
    });
    const answer = (await response.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string; error_description?: string };
    if (!response.ok || !answer.access_token) throw new Error(`Firebase refused the service account: ${answer.error_description ?? answer.error ?? `HTTP ${response.status}`}`);
    this.access = { token: answer.access_token, until: Date.now() + Math.max(60, (answer.expires_in ?? 3600) - 300) * 1000 };
    return answer.access_token;
  }

  /** One message per device; each answer says whether FCM took it and, if not, its error code. */
  async send(devices: ReadonlyArray<{ deviceToken: string; message: Record<string, unknown> }>): Promise<Delivery[]> {
    let token: string;
    try {
      token = await this.accessToken();
    } catch (error) {
      return devices.map(() => ({ ok: false, error: (error as Error).message }));
    }
    const base = (this.settings.url ?? 'https://fcm.googleapis.com').replace(/\/+$/, '');
    const endpoint = `${base}/v1/projects/${encodeURIComponent(this.settings.firebaseServiceAccount.project_id)}/messages:send`;
    return Promise.all(
      devices.map(async ({ deviceToken, message }): Promise<Delivery> => {
        try {
          const response = await this.fetch(endpoint, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ message: { ...message, token: deviceToken } }),
            timeoutMs: TIMEOUT_MS,
            maxBytes: MAX_ANSWER_BYTES,
          });
          if (response.ok) {
            await response.body?.cancel().catch(() => undefined);
            return { ok: true };
          }
          const answer = (await response.json().catch(() => ({}))) as { error?: { status?: string; message?: string; details?: Array<{ errorCode?: string }> } };
          return { ok: false, error: answer.error?.details?.find((d) => d.errorCode)?.errorCode ?? answer.error?.status ?? `HTTP ${response.status}` };
        } catch (error) {
          return { ok: false, error: (error as Error).message };
        }
      }),
    );
  }
}

import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { importPKCS8, SignJWT } from 'jose';
import type { OutboundClient } from '../../shared/outbound/client.js';
import { portOf } from '../../shared/outbound/destination.js';
import type { PushSettings } from './options.js';
import type { Delivery } from './types.js';

type IosSettings = NonNullable<PushSettings['ios']>;

/** Apple lets a provider token live an hour; a fresh one every 50 minutes stays inside it. */
const TOKEN_MS = 50 * 60_000;

/**
 * Sends to Apple Push Notification service over HTTP/2 with a token key (Apple's "Sending
 * notification requests to APNs"): `POST /3/device/<deviceToken>` with `authorization: bearer
 * <ES256 JWT of {iss: teamId, iat}, kid: keyId>`, `apns-topic`, `apns-push-type`.
 */
export class ApnsSender {
  private token: { jwt: string; at: number } | undefined;

  /** @param outbound checks where the app's APNs address leads (public only, unless the operator allows it). */
  constructor(
    private readonly settings: IosSettings,
    private readonly outbound: Pick<OutboundClient, 'resolve'>,
  ) {}

  /**
   * An HTTP/2 session to `base`, over a connection to the address the outbound client checked (no
   * second lookup), TLS checked against the URL's host name.
   * @throws OutboundRefused when the address is not public and not allowed; the resolver's error.
   */
  private async connect(base: URL): Promise<http2.ClientHttp2Session> {
    const { address } = await this.outbound.resolve(base);
    const port = portOf(base);
    const name = base.hostname.replace(/^\[|\]$/g, '');
    const servername = net.isIP(name) ? undefined : name;
    return http2.connect(base, {
      createConnection: () => (base.protocol === 'https:' ? tls.connect({ host: address, port, servername, ALPNProtocols: ['h2'] }) : net.connect({ host: address, port })),
    });
  }

  private async bearer(): Promise<string> {
    if (this.token && Date.now() - this.token.at < TOKEN_MS) return this.token.jwt;
    const key = await importPKCS8(this.settings.token.key, 'ES256');
    const jwt = await new SignJWT({ iss: this.settings.token.teamId }).setProtectedHeader({ alg: 'ES256', kid: this.settings.token.keyId }).setIssuedAt().sign(key);
    this.token = { jwt, at: Date.now() };
    return jwt;
  }

  /** One notification per device; each answer says whether Apple took it and, if not, its reason. */
  async send(devices: ReadonlyArray<{ deviceToken: string; payload: Record<string, unknown> }>, expiration?: number): Promise<Delivery[]> {
    const base = new URL(this.settings.url ?? (this.settings.production ? 'https://api.push.apple.com' : 'https://api.sandbox.push.apple.com'));
    let session: http2.ClientHttp2Session;
    try {
      session = await this.connect(base);
    } catch (error) {
      return devices.map(() => ({ ok: false, error: (error as Error).message }));
    }
    const authorization = `bearer ${await this.bearer()}`;
    session.on('error', () => undefined);
    try {
      return await Promise.all(
        devices.map(
          ({ deviceToken, payload }) =>
            new Promise<Delivery>((resolve) => {
              const aps = (payload.aps ?? {}) as Record<string, unknown>;
              const background = aps['content-available'] === 1 && aps.alert === undefined;
              const request = session.request({
                ':method': 'POST',
                ':path': `/3/device/${encodeURIComponent(deviceToken)}`,
                authorization,
                'apns-topic': this.settings.topic,
                'apns-push-type': background ? 'background' : 'alert',
                'apns-priority': background ? '5' : '10',
                ...(expiration ? { 'apns-expiration': String(Math.floor(expiration / 1000)) } : {}),
                'content-type': 'application/json',
              });
              let status = 0;
              let body = '';
              request.setTimeout(15_000, () => request.close(http2.constants.NGHTTP2_CANCEL));
              request.on('response', (headers) => (status = Number(headers[':status'])));
              request.on('data', (chunk: Buffer) => (body += chunk.toString()));
              request.on('end', () => {
                if (status === 200) return resolve({ ok: true });
                let reason = `HTTP ${status || 'no answer'}`;
                try {
                  reason = (JSON.parse(body) as { reason?: string }).reason ?? reason;
                } catch {
                  // not JSON
                }
                resolve({ ok: false, error: reason });
              });
              request.on('error', (error) => resolve({ ok: false, error: error.message }));
              request.end(JSON.stringify(payload));
            }),
        ),
      );
    } finally {
      session.close();
    }
  }
}

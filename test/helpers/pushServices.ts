import crypto from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
// http_ece is what browsers' Web Push decryption follows (RFC 8188/8291); web-push encrypts with it.
import ece from 'http_ece';
import { exportPKCS8, generateKeyPair, importJWK, jwtVerify, type CryptoKey } from 'jose';

/**
 * Stand-ins for the push services Backyard cannot reach from a test, on loopback, each checking what
 * the real one checks:
 * - APNs (HTTP/2): the provider token is an ES256 JWT signed by the team's key (kid, iss, fresh iat),
 *   `apns-topic` is the app's bundle id, the device token is one it knows (else 400 BadDeviceToken).
 * - FCM HTTP v1: the access token comes from an RS256 assertion signed by the service account's key
 *   (iss, aud = token_uri, the messaging scope); a message names a registration token it knows (else
 *   404 UNREGISTERED).
 * - A Web Push service: the VAPID JWT is ES256 signed by the key in `k=`, for this origin, expiring
 *   within 24 hours; the body is aes128gcm, and decrypts with the subscription's keys.
 */
export interface PushStandIns {
  apns: { url: string; hostPort: string; settings: Record<string, unknown>; received: Array<{ token: string; topic: string; payload: Record<string, unknown> }>; validToken: string };
  fcm: { url: string; hostPort: string; settings: Record<string, unknown>; received: Array<Record<string, unknown>>; validToken: string };
  web: { hostPort: string; settings: Record<string, unknown>; subscription: string; received: Array<Record<string, unknown>> };
  close(): Promise<void>;
}

const listen = (server: http.Server | http2.Http2Server) =>
  new Promise<number>((resolve) => (server as http.Server).listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

const bodyOf = (req: http.IncomingMessage | http2.Http2ServerRequest) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });

export async function startPushStandIns(): Promise<PushStandIns> {
  // APNs
  const apple = await generateKeyPair('ES256', { extractable: true });
  const apns = { keyId: 'ABC123DEFG', teamId: 'TEAM123456', topic: 'com.example.backyard', validToken: crypto.randomBytes(32).toString('hex') };
  const apnsReceived: PushStandIns['apns']['received'] = [];
  const apnsServer = http2.createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const reply = (status: number, reason?: string) => {
        res.writeHead(status, { 'apns-id': crypto.randomUUID() });
        if (reason) res.end(JSON.stringify({ reason }));
        else res.end();
      };
      const jwt = /^bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      try {
        const { payload, protectedHeader } = await jwtVerify(jwt ?? '', apple.publicKey, { algorithms: ['ES256'] });
        if (protectedHeader.kid !== apns.keyId || payload.iss !== apns.teamId || !payload.iat || Date.now() / 1000 - payload.iat > 3600) return reply(403, 'InvalidProviderToken');
      } catch {
        return reply(403, 'InvalidProviderToken');
      }
      if (req.headers['apns-topic'] !== apns.topic) return reply(400, 'DeviceTokenNotForTopic');
      const token = /^\/3\/device\/([0-9a-f]{64})$/.exec(req.url)?.[1];
      if (!token || token !== apns.validToken) return reply(400, 'BadDeviceToken');
      apnsReceived.push({ token, topic: String(req.headers['apns-topic']), payload: JSON.parse(body.toString()) as Record<string, unknown> });
      reply(200);
    })();
  });
  const apnsPort = await listen(apnsServer);

  // FCM
  const google = await generateKeyPair('RS256', { extractable: true });
  const fcm = { validToken: `fcm-${crypto.randomBytes(8).toString('hex')}`, accessTokens: new Set<string>() };
  const fcmReceived: Array<Record<string, unknown>> = [];
  const fcmServer = http.createServer((req, res) => {
    void (async () => {
      const body = (await bodyOf(req)).toString();
      const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (req.url === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return json(400, { error: 'unsupported_grant_type' });
        try {
          const { payload } = await jwtVerify(form.get('assertion') ?? '', google.publicKey, { algorithms: ['RS256'], issuer: 'push@backyard-test.iam.gserviceaccount.com', audience: `${fcmUrl}/token` });
          if (!String(payload.scope).split(' ').includes('https://www.googleapis.com/auth/firebase.messaging')) return json(400, { error: 'invalid_scope' });
        } catch (error) {
          return json(400, { error: 'invalid_grant', error_description: (error as Error).message });
        }
        const token = crypto.randomBytes(16).toString('hex');
        fcm.accessTokens.add(token);
        return json(200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
      }
      if (req.url === '/v1/projects/backyard-test/messages:send' && req.method === 'POST') {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!bearer || !fcm.accessTokens.has(bearer)) return json(401, { error: { code: 401, status: 'UNAUTHENTICATED' } });
        const { message } = JSON.parse(body) as { message: Record<string, unknown> };
        if (message.token !== fcm.validToken) return json(404, { error: { code: 404, status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } });
        fcmReceived.push(message);
        return json(200, { name: `projects/backyard-test/messages/${crypto.randomUUID()}` });
      }
      json(404, { error: { code: 404, status: 'NOT_FOUND' } });
    })();
  });
  const fcmPort = await listen(fcmServer);
  const fcmUrl = `http://127.0.0.1:${fcmPort}`;

  // Web Push
  const vapid = (await import('web-push')).default.generateVAPIDKeys();
  const browser = crypto.createECDH('prime256v1');
  browser.generateKeys();
  const authSecret = crypto.randomBytes(16);
  const webReceived: Array<Record<string, unknown>> = [];
  const webServer = http.createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const origin = `http://${req.headers.host}`;
      const match = /^vapid t=([^,]+),\s*k=(.+)$/.exec(req.headers.authorization ?? '');
      if (!match) return res.writeHead(401).end('VAPID authorization required');
      try {
        const point = Buffer.from(match[2]!, 'base64url');
        const key = (await importJWK({ kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') }, 'ES256')) as CryptoKey;
        const { payload } = await jwtVerify(match[1]!, key, { algorithms: ['ES256'], audience: origin });
        if (!payload.sub || !payload.exp || payload.exp - Date.now() / 1000 > 24 * 3600) return res.writeHead(403).end('bad VAPID claims');
        if (match[2] !== vapid.publicKey) return res.writeHead(403).end('not the key this subscription was made with');
      } catch (error) {
        return res.writeHead(403).end(`bad VAPID token: ${(error as Error).message}`);
      }
      if (req.headers['content-encoding'] !== 'aes128gcm' || req.headers.ttl === undefined) return res.writeHead(400).end('aes128gcm and TTL required');
      const clear = ece.decrypt(body, { version: 'aes128gcm', privateKey: browser, authSecret });
      webReceived.push(JSON.parse(clear.toString()) as Record<string, unknown>);
      res.writeHead(201).end();
    })();
  });
  const webPort = await listen(webServer);

  return {
    apns: {
      url: `http://127.0.0.1:${apnsPort}`,
      hostPort: `127.0.0.1:${apnsPort}`,
      settings: { token: { key: await exportPKCS8(apple.privateKey), keyId: apns.keyId, teamId: apns.teamId }, topic: apns.topic, url: `http://127.0.0.1:${apnsPort}` },
      received: apnsReceived,
      validToken: apns.validToken,
    },
    fcm: {
      url: fcmUrl,
      hostPort: `127.0.0.1:${fcmPort}`,
      settings: {
        firebaseServiceAccount: { type: 'service_account', project_id: 'backyard-test', client_email: 'push@backyard-test.iam.gserviceaccount.com', private_key: await exportPKCS8(google.privateKey), token_uri: `${fcmUrl}/token` },
        url: fcmUrl,
      },
      received: fcmReceived,
      validToken: fcm.validToken,
    },
    web: {
      hostPort: `127.0.0.1:${webPort}`,
      settings: { vapidDetails: { subject: 'mailto:push@example.com', publicKey: vapid.publicKey, privateKey: vapid.privateKey } },
      subscription: JSON.stringify({ endpoint: `http://127.0.0.1:${webPort}/push/${crypto.randomUUID()}`, keys: { p256dh: browser.getPublicKey('base64url'), auth: authSecret.toString('base64url') } }),
      received: webReceived,
    },
    close: async () => {
      await Promise.all([apnsServer, fcmServer, webServer].map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}

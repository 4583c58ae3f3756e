import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose';

/**
 * A stand-in for the sign-in providers Backyard cannot reach from a test (Apple, Google, Facebook,
 * GitHub, Microsoft, an OpenID Connect issuer), on loopback. It checks what the real ones check: its
 * ID tokens are RS256 JWTs signed with its own key and published as a JWKS (with a discovery
 * document); an authorization code is single-use and is exchanged only with the right client id and
 * secret (and redirect_uri for Microsoft); an access token reads only its own user; Facebook's Graph
 * API wants the `appsecret_proof` HMAC of the token when the app has a secret.
 */
export interface SignInStandIn {
  url: string;
  /** `host:port`, for BACKYARD_CLOUD_ALLOW_HOSTS. */
  hostPort: string;
  /** Signs an ID token with the published key, or with `key: 'rogue'` a key of the same `kid` it never published. */
  sign(claims: JWTPayload, options?: { key?: 'published' | 'rogue'; expiresIn?: string | number }): Promise<string>;
  /** A code GitHub or Microsoft would hand the app's front end after the user agreed. */
  code(provider: 'github' | 'microsoft', userId: string | number, redirectUri?: string): string;
  /** An access token of a user (Facebook's classic login; insecure GitHub/Microsoft). */
  accessToken(provider: 'github' | 'microsoft' | 'facebook', userId: string | number): string;
  /** How many requests each path got. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export const CLIENT = { id: 'backyard-client', secret: 'backyard-secret', facebookAppId: '1234567890', facebookSecret: 'fb-app-secret' };

export async function startSignInStandIn(): Promise<SignInStandIn> {
  const published = await generateKeyPair('RS256', { extractable: true });
  const rogue = await generateKeyPair('RS256');
  const kid = 'stand-in-key-1';
  const jwk = { ...(await exportJWK(published.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { provider: string; userId: string | number; redirectUri?: string }>();
  const tokens = new Map<string, { provider: string; userId: string | number }>();
  const hits = new Map<string, number>();

  const json = (res: http.ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const bodyOf = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => resolve(text));
    });
  const bearer = (req: http.IncomingMessage, provider: string) => {
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const entry = token ? tokens.get(token) : undefined;
    return entry?.provider === provider ? entry : undefined;
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
      const base = `http://${req.headers.host}`;
      if (url.pathname === '/.well-known/openid-configuration') return json(res, 200, { issuer: base, jwks_uri: `${base}/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
      if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
      if (url.pathname === '/github/token' && req.method === 'POST') {
        const body = JSON.parse(await bodyOf(req)) as Record<string, string>;
        const grant = codes.get(body.code ?? '');
        if (body.client_id !== CLIENT.id || body.client_secret !== CLIENT.secret) return json(res, 200, { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
        if (!grant || grant.provider !== 'github') return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
        codes.delete(body.code!);
        return json(res, 200, { access_token: issue('github', grant.userId), token_type: 'bearer', scope: '' });
      }
      if (url.pathname === '/github/user') {
        const user = bearer(req, 'github');
        return user ? json(res, 200, { id: user.userId, login: `user${user.userId}` }) : json(res, 401, { message: 'Bad credentials' });
      }
      if (url.pathname === '/microsoft/token' && req.method === 'POST') {
        const form = new URLSearchParams(await bodyOf(req));
        const grant = codes.get(form.get('code') ?? '');
        if (form.get('client_id') !== CLIENT.id || form.get('client_secret') !== CLIENT.secret) return json(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
        if (form.get('grant_type') !== 'authorization_code' || !grant || grant.provider !== 'microsoft' || grant.redirectUri !== (form.get('redirect_uri') ?? undefined)) {
          return json(res, 400, { error: 'invalid_grant', error_description: 'AADSTS70000: The provided authorization code is invalid.' });
        }
        codes.delete(form.get('code')!);
        return json(res, 200, { access_token: issue('microsoft', grant.userId), token_type: 'Bearer' });
      }
      if (url.pathname === '/microsoft/me') {
        const user = bearer(req, 'microsoft');
        return user ? json(res, 200, { id: user.userId, displayName: 'Stand-in user' }) : json(res, 401, { error: { code: 'InvalidAuthenticationToken' } });
      }
      if (url.pathname === '/facebook/me' || url.pathname === '/facebook/app') {
        const token = url.searchParams.get('access_token') ?? '';
        const entry = tokens.get(token);
        const proof = crypto.createHmac('sha256', CLIENT.facebookSecret).update(token).digest('hex');
        if (url.searchParams.get('appsecret_proof') !== proof) return json(res, 400, { error: { message: 'Invalid appsecret_proof provided in the API argument', type: 'GraphMethodException', code: 100 } });
        if (!entry || entry.provider !== 'facebook') return json(res, 400, { error: { message: 'Invalid OAuth access token data.', type: 'OAuthException', code: 190 } });
        return json(res, 200, url.pathname === '/facebook/me' ? { id: String(entry.userId) } : { id: CLIENT.facebookAppId, name: 'Stand-in app' });
      }
      json(res, 404, { error: 'not_found' });
    })();
  });
  const issue = (provider: string, userId: string | number) => {
    const token = crypto.randomBytes(20).toString('hex');
    tokens.set(token, { provider, userId });
    return token;
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    hits,
    sign: (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '10m')
        .sign((options.key === 'rogue' ? rogue.privateKey : published.privateKey) as CryptoKey),
    code: (provider, userId, redirectUri) => {
      const code = crypto.randomBytes(10).toString('hex');
      codes.set(code, { provider, userId, redirectUri });
      return code;
    },
    accessToken: (provider, userId) => issue(provider, userId),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

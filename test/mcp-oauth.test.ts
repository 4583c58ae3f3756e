import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  auth,
  discoverAuthorizationServerMetadata,
  startAuthorization,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from './helpers/browser.js';
import { clientDocument, consent as consentOn, startClientSite, type ClientSite } from './helpers/oauthSite.js';
import { dashboardCookie, startTestServer, type TestServer } from './helpers/server.js';
import { OAuthClients } from '../src/platform/oauth/clients.js';
import { MetadataDocuments } from '../src/platform/oauth/metadataDocuments.js';
import { OAuthService } from '../src/platform/oauth/service.js';

/*
 * MCP authorization through real parts: Backyard on loopback, the v2 TypeScript client's
 * OAuth provider support, the consent page in Chromium, and a small client web server of the test's
 * own (its redirect URI and its client metadata document).
 */

const info = { name: 'backyard-oauth-tests', version: '1.0.0' };

/** An OAuth client provider kept in memory, as a desktop MCP client would keep it on disk. */
class MemoryProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    /** A client id known in advance (a metadata document URL): then there is nothing to register. */
    clientId?: string,
  ) {
    this.client = clientId ? { client_id: clientId } : undefined;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: StoredOAuthClientInformation) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
  }
}

let server: TestServer;
let browser: Browser;
let site: ClientSite;
const CLIENT_NAME = 'Test <b>Client</b> & "Co"';

beforeAll(async () => {
  // The test's client site, and its metadata document, are on loopback like Backyard itself.
  server = await startTestServer({ BACKYARD_OAUTH_LOOPBACK_CLIENTS: '1' });
  browser = await launchBrowser();
  site = await startClientSite(clientDocument(CLIENT_NAME));
}, 120_000);

afterAll(async () => {
  await site?.close();
  await browser?.close();
  await server?.close();
});

const mcpUrl = () => new URL(`${server.url}/mcp`);
const metadataFor = (name: string): OAuthClientMetadata => ({
  client_name: name,
  redirect_uris: [site.callback],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
});

/** A page of a browser signed in to the dashboard as alice: the authorization endpoint looks at nothing before sign-in. */
async function signedInPage(): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const [name, value] = (await dashboardCookie(server)).split('=') as [string, string];
  await context.addCookies([{ name, value, url: server.url }]);
  return { page: await context.newPage(), close: () => context.close() };
}

/** Consent in Chromium as alice, coming back to the test's client site. */
const consent = (context: BrowserContext, authorizationUrl: URL, choice: Parameters<typeof consentOn>[4], on: ClientSite = site) =>
  consentOn(context, authorizationUrl, on, server.alice, choice);

/** Connects the v2 client with an OAuth provider: 401, discovery, (registration), consent in Chromium, code exchange, connect. */
async function connectWithOAuth(provider: MemoryProvider, context: BrowserContext, choice: { access: 'read' | 'full'; expectName?: string }) {
  const first = new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const firstTransport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const callback = await consent(context, provider.authorizationUrl!, choice);
  expect(callback.searchParams.get('iss')).toBe(server.url);
  expect(callback.searchParams.get('code')).toBeTruthy();
  await firstTransport.finishAuth(callback.searchParams);
  const client = new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

const postForm = (url: string, fields: Record<string, string>) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });

const asMcp = (token: string) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: info } }),
  });

describe('discovery (RFC 9728, RFC 8414)', () => {
  it('answers 401 from /mcp with where the resource metadata is and which scopes to ask for', async () => {
    const response = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp", scope="mcp:read mcp:write"`,
    );
    const wrong = await asMcp('bya_not-a-token');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('serves the protected resource metadata at both well-known addresses and the authorization server metadata', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const prm = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>;
      expect(prm).toMatchObject({ resource: `${server.url}/mcp`, authorization_servers: [server.url], scopes_supported: ['mcp:read', 'mcp:write'] });
    }
    const metadata = await discoverAuthorizationServerMetadata(server.url);
    expect(metadata).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/dashboard/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      registration_endpoint: `${server.url}/oauth/register`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });
});

describe('a client identified by its metadata document', () => {
  it('connects with full access, calls tools, refreshes with rotation, and is refused once it revoked its token', async () => {
    const provider = new MemoryProvider(site.callback, metadataFor('ignored: the document names the client'), site.documentUrl);
    const context = await browser.newContext();
    try {
      const fetchesBefore = site.documentFetches;
      const client = await connectWithOAuth(provider, context, { access: 'full', expectName: CLIENT_NAME });
      expect(site.documentFetches).toBeGreaterThan(fetchesBefore);
      expect(provider.saved?.scope).toBe('mcp:read mcp:write');

      const created = await client.callTool({ name: 'createBackendApp', arguments: { appName: 'oauth-made' } });
      expect(created.isError).toBeFalsy();
      const listed = await client.callTool({ name: 'getBackendApps', arguments: {} });
      expect(JSON.stringify(listed.structuredContent)).toContain('oauth-made');

      // Refresh: a new pair; the old refresh token is spent.
      const before = provider.saved!;
      expect(await auth(provider, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
      const after = provider.saved!;
      expect(after.access_token).not.toBe(before.access_token);
      expect(after.refresh_token).not.toBe(before.refresh_token);
      expect((await client.callTool({ name: 'getBackendApps', arguments: {} })).isError).toBeFalsy();

      // Revocation (RFC 7009) of the refresh token ends the connection: the access token stops working.
      const revoke = await postForm(`${server.url}/oauth/revoke`, { token: after.refresh_token!, token_type_hint: 'refresh_token', client_id: site.documentUrl });
      expect(revoke.status).toBe(200);
      expect((await asMcp(after.access_token)).status).toBe(401);
      await expect(client.callTool({ name: 'getBackendApps', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
      await client.close();
    } finally {
      await context.close();
    }
  }, 120_000);

  it('revokes the whole grant when a rotated refresh token is presented again', async () => {
    const provider = new MemoryProvider(site.callback, metadataFor('x'), site.documentUrl);
    const context = await browser.newContext();
    try {
      const client = await connectWithOAuth(provider, context, { access: 'read' });
      const original = provider.saved!;
      expect(await auth(provider, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
      const rotated = provider.saved!;
      expect((await asMcp(rotated.access_token)).status).toBe(200);

      const replay = await postForm(`${server.url}/oauth/token`, { grant_type: 'refresh_token', refresh_token: original.refresh_token!, client_id: site.documentUrl });
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
      expect((await asMcp(rotated.access_token)).status).toBe(401);
      const again = await postForm(`${server.url}/oauth/token`, { grant_type: 'refresh_token', refresh_token: rotated.refresh_token!, client_id: site.documentUrl });
      expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
      await client.close();
    } finally {
      await context.close();
    }
  }, 120_000);

  it('refuses a metadata document whose client_id is not its own URL', async () => {
    const liar = await startClientSite(() => ({ client_id: 'https://trusted.example/client.json', client_name: 'Liar', redirect_uris: [site.callback] }));
    try {
      const { page, close } = await signedInPage();
      try {
        const url = new URL(`${server.url}/dashboard/oauth/authorize`);
        url.search = new URLSearchParams({
          response_type: 'code',
          client_id: liar.documentUrl,
          redirect_uri: site.callback,
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        }).toString();
        const response = await page.goto(url.href);
        expect(response?.status()).toBe(400);
        expect(await page.textContent('main')).toMatch(/client_id/);
        expect(new URL(page.url()).origin).toBe(server.url);
      } finally {
        await close();
      }
    } finally {
      await liar.close();
    }
  }, 60_000);
});

describe('a client registered with Dynamic Client Registration (RFC 7591)', () => {
  it('registers, gets a read-only grant that cannot call createBackendApp, and is disconnected from the dashboard', async () => {
    const provider = new MemoryProvider(site.callback, metadataFor('Registered Helper'));
    const context = await browser.newContext();
    try {
      const client = await connectWithOAuth(provider, context, { access: 'read', expectName: 'Registered Helper' });
      expect(provider.client?.client_id).toMatch(/^byc_/);
      expect(provider.saved?.scope).toBe('mcp:read');

      expect((await client.callTool({ name: 'getBackendApps', arguments: {} })).isError).toBeFalsy();
      const refused = await client.callTool({ name: 'createBackendApp', arguments: { appName: 'not-allowed' } });
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toMatch(/mcp:write/);
      expect(refused.content[0].text).toMatch(/read-only/);
      expect((await server.platform.services.backendApps.list((await server.platform.services.accounts.findByLogin('alice'))!.id)).map((a) => a.appName)).not.toContain(
        'not-allowed',
      );

      // The dashboard lists the connection (the same browser is still signed in) and disconnects it.
      const page = await context.newPage();
      try {
        page.on('dialog', (dialog) => void dialog.accept());
        await page.goto(`${server.url}/dashboard/connections`);
        const row = page.locator('#connections tr', { hasText: 'Registered Helper' });
        await expect(row.textContent()).resolves.toMatch(/Read only/);
        await Promise.all([page.waitForURL(/\/dashboard\/connections\?flash=/), row.locator('button', { hasText: 'Disconnect' }).click()]);
        expect(await page.locator('#connections tr', { hasText: 'Registered Helper' }).count()).toBe(0);
      } finally {
        await page.close();
      }
      expect((await asMcp(provider.saved!.access_token)).status).toBe(401);
      const refresh = await postForm(`${server.url}/oauth/token`, { grant_type: 'refresh_token', refresh_token: provider.saved!.refresh_token!, client_id: provider.client!.client_id });
      expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
      await client.close();
    } finally {
      await context.close();
    }
  }, 120_000);

  it('refuses registration metadata with an http redirect URI on a public host', async () => {
    const response = await fetch(`${server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x', redirect_uris: ['http://evil.example/callback'] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_redirect_uri' });
  });
});

describe('the authorization code and its checks', () => {
  /** A registered client, an authorization URL made by the SDK's helper, and the code Chromium brings back. */
  async function codeFor(options: { resource?: string } = {}) {
    const metadata = (await discoverAuthorizationServerMetadata(server.url))!;
    const registered = (await (
      await fetch(`${server.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadataFor('Checker')) })
    ).json()) as { client_id: string };
    const { authorizationUrl, codeVerifier } = await startAuthorization(server.url, {
      metadata,
      clientInformation: registered,
      redirectUrl: site.callback,
      scope: 'mcp:read mcp:write',
      state: 'state-123',
      resource: new URL(options.resource ?? `${server.url}/mcp`),
    });
    const context = await browser.newContext();
    try {
      const callback = await consent(context, authorizationUrl, { access: 'full', expectName: 'Checker' });
      return { clientId: registered.client_id, codeVerifier, callback, code: callback.searchParams.get('code')! };
    } finally {
      await context.close();
    }
  }

  const exchange = (fields: Record<string, string>) => postForm(`${server.url}/oauth/token`, { grant_type: 'authorization_code', ...fields });

  it('refuses a wrong PKCE verifier and a redirect URI that differs by one character', async () => {
    const a = await codeFor();
    expect(a.callback.searchParams.get('state')).toBe('state-123');
    const wrongVerifier = await exchange({ code: a.code, client_id: a.clientId, redirect_uri: site.callback, code_verifier: 'x'.repeat(43) });
    expect(wrongVerifier.status).toBe(400);
    expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/code_verifier/) });

    const b = await codeFor();
    const wrongRedirect = await exchange({ code: b.code, client_id: b.clientId, redirect_uri: `${site.callback}x`, code_verifier: b.codeVerifier });
    expect(wrongRedirect.status).toBe(400);
    expect(await wrongRedirect.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/redirect_uri/) });

    // At the authorization endpoint, such a redirect URI is refused on Backyard's page, never redirected to.
    const { page, close } = await signedInPage();
    try {
      const url = new URL(`${server.url}/dashboard/oauth/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: b.clientId,
        redirect_uri: site.callback.slice(0, -1) + 'X',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      const response = await page.goto(url.href);
      expect(response?.status()).toBe(400);
      expect(new URL(page.url()).origin).toBe(server.url);
      expect(await page.textContent('main')).toMatch(/redirect_uri/);
    } finally {
      await close();
    }
  }, 120_000);

  it('sends a denial back to the client as access_denied, with state and iss and no code', async () => {
    const metadata = (await discoverAuthorizationServerMetadata(server.url))!;
    const registered = (await (
      await fetch(`${server.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadataFor('Denied')) })
    ).json()) as { client_id: string };
    const { authorizationUrl } = await startAuthorization(server.url, {
      metadata,
      clientInformation: registered,
      redirectUrl: site.callback,
      scope: 'mcp:read mcp:write',
      state: 'deny-state',
      resource: new URL(`${server.url}/mcp`),
    });
    const context = await browser.newContext();
    try {
      const callback = await consent(context, authorizationUrl, { access: 'full', decision: 'deny', expectName: 'Denied' });
      expect(Object.fromEntries(callback.searchParams)).toMatchObject({ error: 'access_denied', state: 'deny-state', iss: server.url });
      expect(callback.searchParams.get('code')).toBeNull();
    } finally {
      await context.close();
    }
  }, 60_000);

  it('refuses a reused code and revokes what its first use obtained', async () => {
    const c = await codeFor();
    const fields = { code: c.code, client_id: c.clientId, redirect_uri: site.callback, code_verifier: c.codeVerifier };
    const first = await exchange(fields);
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as { access_token: string; token_type: string; scope: string };
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'mcp:read mcp:write' });
    expect((await asMcp(tokens.access_token)).status).toBe(200);

    const second = await exchange(fields);
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await asMcp(tokens.access_token)).status).toBe(401);
  }, 120_000);

  it('refuses tokens for another resource: at authorization, at the token endpoint, and at /mcp', async () => {
    // The authorization request names another resource: the error goes back to the client, with iss.
    const metadata = (await discoverAuthorizationServerMetadata(server.url))!;
    const registered = (await (
      await fetch(`${server.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadataFor('Elsewhere')) })
    ).json()) as { client_id: string };
    const { authorizationUrl } = await startAuthorization(server.url, {
      metadata,
      clientInformation: registered,
      redirectUrl: site.callback,
      scope: 'mcp:read',
      state: 's',
      resource: new URL('https://elsewhere.example/mcp'),
    });
    const { page, close } = await signedInPage();
    try {
      const back = site.nextCallback();
      await page.goto(authorizationUrl.href);
      // Straight back to the client, without a consent page.
      expect(new URL(page.url()).origin).toBe(site.base);
      const callback = await back;
      expect(callback.searchParams.get('error')).toBe('invalid_target');
      expect(callback.searchParams.get('iss')).toBe(server.url);
      expect(callback.searchParams.get('state')).toBe('s');
      expect(callback.searchParams.get('code')).toBeNull();
    } finally {
      await close();
    }

    // The token request names another resource than the code's.
    const c = await codeFor();
    const wrongTarget = await postForm(`${server.url}/oauth/token`, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: site.callback,
      code_verifier: c.codeVerifier,
      resource: 'https://elsewhere.example/mcp',
    });
    expect(await wrongTarget.json()).toMatchObject({ error: 'invalid_target' });

    // A token minted over the same store for another resource (another server's /mcp) is refused here.
    const elsewhere = new OAuthService(
      server.platform.db,
      new OAuthClients(server.platform.db, new MetadataDocuments()),
      () => 'https://elsewhere.example/mcp',
      () => 'https://elsewhere.example',
    );
    const check = await elsewhere.checkAuthorizationRequest({
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: site.callback,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: 'mcp:read mcp:write',
    });
    if (check.kind !== 'ok') throw new Error('the request should pass');
    const alice = (await server.platform.services.accounts.findByLogin('alice'))!;
    const code = await elsewhere.issueCode(alice, check.request, ['mcp:read', 'mcp:write']);
    const foreign = await elsewhere.exchangeCode({ code, client_id: registered.client_id, redirect_uri: site.callback, code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' });
    const refused = await asMcp(foreign.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    expect(await refused.text()).toMatch(/elsewhere\.example/);
  }, 120_000);
});

describe('account tokens', () => {
  it('keep working on /mcp with full access', async () => {
    const client = new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { requestInit: { headers: { authorization: `Bearer ${server.alice}` } } }));
    try {
      const created = await client.callTool({ name: 'createBackendApp', arguments: { appName: 'by-token' } });
      expect(created.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

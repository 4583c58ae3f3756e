import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrap, type Trap } from './helpers/outboundTargets.js';
import { dashboardCookie, startTestServer, type TestServer } from './helpers/server.js';

/*
 * The authorization endpoint as an attacker and as a client meet it, over real HTTP on loopback:
 * nothing of a request is fetched before sign-in, a client_id that is not https (or loopback the
 * operator did not allow) is refused without a fetch, every fetch failure reads the same, and every
 * error after the client is known goes back to it as OAuth says (RFC 6749 §4.1.2.1, RFC 9207).
 */

let plain: TestServer;
let local: TestServer;
let trap: Trap;

beforeAll(async () => {
  trap = await startTrap();
  plain = await startTestServer();
  local = await startTestServer({ BACKYARD_OAUTH_LOOPBACK_CLIENTS: '1' });
}, 120_000);

afterAll(async () => {
  await plain?.close();
  await local?.close();
  await trap?.close();
});

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

function authorizeUrl(server: TestServer, params: Record<string, string>): string {
  const url = new URL(`${server.url}/dashboard/oauth/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...params }).toString();
  return url.href;
}

const get = (url: string, cookie?: string) => fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });

/** The text of the refusal page's notice (the part that says why). */
async function refusalText(response: Response): Promise<string> {
  const page = await response.text();
  return /<main[\s\S]*<\/main>/.exec(page)?.[0].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ') ?? page;
}

describe('before sign-in', () => {
  it('sends to sign-in, carrying the request, and fetches nothing from a client_id URL', async () => {
    for (const server of [plain, local]) {
      for (const clientId of [`http://127.0.0.1:${trap.port}/x`, `https://127.0.0.1:${trap.port}/x`, `http://[::ffff:7f00:1]:${trap.port}/x`]) {
        const url = authorizeUrl(server, { client_id: clientId, redirect_uri: `http://127.0.0.1:${trap.port}/cb`, state: 's' });
        const response = await get(url);
        expect(response.status).toBe(303);
        const location = new URL(response.headers.get('location')!, server.url);
        expect(location.pathname).toBe('/dashboard/sign-in');
        expect(new URL(location.searchParams.get('next')!, server.url).searchParams.get('client_id')).toBe(clientId);
      }
    }
    expect(trap.hits).toBe(0);
  });
});

describe('signed in', () => {
  it('refuses a client_id that is not https, and a loopback one the operator did not allow, without fetching it', async () => {
    const cookie = await dashboardCookie(plain);
    for (const [clientId, why] of [
      [`http://127.0.0.1:${trap.port}/x`, /loopback host/],
      [`https://127.0.0.1:${trap.port}/x`, /loopback host/],
      [`http://localhost:${trap.port}/x`, /loopback host/],
      ['http://app.example/client.json', /must use https/],
    ] as const) {
      const response = await get(authorizeUrl(plain, { client_id: clientId, state: 's' }), cookie);
      expect(response.status, clientId).toBe(400);
      expect(await refusalText(response)).toMatch(why);
    }
    expect(trap.hits).toBe(0);
  });

  it('says every failure to fetch a document in one text, whether the port is open or closed', async () => {
    const cookie = await dashboardCookie(local);
    const closed = await startTrap();
    await closed.close();
    const open = await startTrap();
    const texts = new Set<string>();
    for (const clientId of [`http://127.0.0.1:${closed.port}/x`, `http://127.0.0.1:${open.port}/x`, 'https://no-such-host.invalid/client.json', 'https://10.0.0.1/client.json']) {
      const response = await get(authorizeUrl(local, { client_id: clientId, state: 's' }), cookie);
      expect(response.status, clientId).toBe(400);
      texts.add((await refusalText(response)).replace(clientId, '<client_id>'));
    }
    await open.close();
    expect(open.hits).toBe(1);
    expect([...texts]).toHaveLength(1);
    const [text] = texts;
    expect(text).toMatch(/could not be used/);
    // The open port answered JSON naming no client: nothing of it is shown.
    expect(text).not.toMatch(/reached|access_token/);
  });
});

describe('errors go back to the client as OAuth says', () => {
  let cookie: string;
  let clientId: string;
  const callback = () => `http://127.0.0.1:${trap.port}/cb`;

  beforeAll(async () => {
    cookie = await dashboardCookie(plain);
    const registered = await fetch(`${plain.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Writer', redirect_uris: [callback()], token_endpoint_auth_method: 'none' }),
    });
    clientId = ((await registered.json()) as { client_id: string }).client_id;
  });

  /** Approves on the consent page as a browser would: the page's form, its CSRF field, the chosen access. */
  async function approve(params: Record<string, string>, access: 'read' | 'full'): Promise<Response> {
    const page = await get(authorizeUrl(plain, params), cookie);
    expect(page.status).toBe(200);
    const html = await page.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const form = new URLSearchParams({ _csrf: csrf, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...params, access, decision: 'approve' });
    return fetch(`${plain.url}/dashboard/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: plain.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
  }

  it('a request for mcp:write approved as read only is granted mcp:read: a code, state and iss, no 5xx', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const response = await approve({ client_id: clientId, redirect_uri: callback(), scope: 'mcp:write', state: 'w-1', code_challenge: challenge }, 'read');
    expect(response.status).toBe(303);
    const back = new URL(response.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(callback());
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ state: 'w-1', iss: plain.url, code: expect.any(String) });
    const token = await fetch(`${plain.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, client_id: clientId, redirect_uri: callback(), code_verifier: verifier }).toString(),
    });
    expect(await token.json()).toMatchObject({ scope: 'mcp:read', token_type: 'Bearer' });
  });

  it('an error once the client and redirect_uri are known goes back with error, error_description, state and iss', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ scope: 'calendar.read', state: 'e-1' }, 'invalid_scope'],
      [{ response_type: 'token', state: 'e-2' }, 'unsupported_response_type'],
      [{ code_challenge_method: 'plain', state: 'e-3' }, 'invalid_request'],
      [{ resource: 'https://elsewhere.example/mcp', state: 'e-4' }, 'invalid_target'],
    ];
    for (const [params, error] of cases) {
      const response = await get(authorizeUrl(plain, { client_id: clientId, redirect_uri: callback(), ...params }), cookie);
      expect(response.status, error).toBe(303);
      const back = new URL(response.headers.get('location')!);
      expect(Object.fromEntries(back.searchParams)).toEqual({ error, error_description: expect.any(String), state: params.state, iss: plain.url });
    }
    // Before the redirect URI is known to be the client's: a page here, never a redirect.
    const unknown = await get(authorizeUrl(plain, { client_id: clientId, redirect_uri: `${callback()}x`, scope: 'nothing', state: 'e-5' }), cookie);
    expect(unknown.status).toBe(400);
    expect(await refusalText(unknown)).toMatch(/redirect_uri/);
    expect(trap.hits).toBe(0);
  });
});

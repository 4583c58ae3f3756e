import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer, dashboardCookie } from './helpers/server.js';
import { CLIENT, startSignInStandIn, type SignInStandIn } from './helpers/signInProvider.js';
import { LOOPBACK_IN_IPV6, startRedirector, startTrap, type Redirector, type Trap } from './helpers/outboundTargets.js';

/**
 * Sign-in providers through the real Parse JS SDK (`Parse.User.logInWith`, `linkWith`,
 * `Parse.AnonymousUtils`) against a running server whose app is configured with a stand-in for each
 * provider (test/helpers/signInProvider.ts): tokens are signed with the stand-in's own RSA key and
 * verified against its JWKS, codes are exchanged and tokens read users as the real services do.
 */
let server: TestServer;
let app: TestApp;
let idp: SignInStandIn;
/** An allowed server that redirects, and a loopback listener no provider request may reach. */
let redirector: Redirector;
let trap: Trap;
const AUDIENCE = 'com.example.backyard';

/** The Parse error of a promise that must fail. */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as Parse.Error;
    return { code, message };
  }
  throw new Error('expected a refusal');
}

const idToken = (sub: string, claims: Record<string, unknown> = {}, options?: Parameters<SignInStandIn['sign']>[1]) =>
  idp.sign({ iss: idp.url, aud: AUDIENCE, sub, ...claims }, options);

beforeAll(async () => {
  idp = await startSignInStandIn();
  redirector = await startRedirector();
  trap = await startTrap();
  server = await startTestServer({ BACKYARD_CLOUD_ALLOW_HOSTS: `${idp.hostPort},${redirector.hostPort}` });
  app = await createTestApp(server);
  await server.platform.services.backendApps.configure(app.appId, {
    auth: {
      corp: { oidc: true, issuer: idp.url, clientId: AUDIENCE },
      google: { clientId: [AUDIENCE, 'web-client'], jwksUri: `${idp.url}/jwks` },
      apple: { clientId: AUDIENCE, jwksUri: `${idp.url}/jwks` },
      github: { clientId: CLIENT.id, clientSecret: CLIENT.secret, tokenUrl: `${idp.url}/github/token`, userUrl: `${idp.url}/github/user` },
      microsoft: { clientId: CLIENT.id, clientSecret: CLIENT.secret, tokenUrl: `${idp.url}/microsoft/token`, userUrl: `${idp.url}/microsoft/me` },
      facebook: { appIds: [CLIENT.facebookAppId], appSecret: CLIENT.facebookSecret, graphUrl: `${idp.url}/facebook/`, jwksUri: `${idp.url}/jwks` },
    },
  });
  Parse.initialize(app.appId, app.keys.javascriptKey);
  Parse.serverURL = app.apiURL;
});

afterAll(async () => {
  await server?.close();
  await idp?.close();
  await redirector?.close();
  await trap?.close();
});

describe('OpenID Connect providers', () => {
  it('signs up with a valid ID token from a generic OIDC provider (discovery), and logs the same user in again', async () => {
    const first = await Parse.User.logInWith('corp', { authData: { id: 'oidc-user-1', id_token: await idToken('oidc-user-1') } });
    expect(first.id).toBeTruthy();
    expect(first.getSessionToken()).toMatch(/^r:/);
    expect(first.get('username')).toHaveLength(25);
    const again = await Parse.User.logInWith('corp', { authData: { id: 'oidc-user-1', id_token: await idToken('oidc-user-1') } });
    expect(again.id).toBe(first.id);
    expect(again.getSessionToken()).not.toBe(first.getSessionToken());
    expect(idp.hits.get('/.well-known/openid-configuration')).toBeGreaterThanOrEqual(1);
    // The stored authData holds the id, and the user reads it back; another user does not.
    const me = await app.call('GET', '/users/me', { sessionToken: again.getSessionToken()! });
    expect((me.body as { authData: { corp: { id: string } } }).authData.corp.id).toBe('oidc-user-1');
  });

  it("GraphQL's logInWith takes the same provider path: it signs up with an ID token, the SDK logs the same user in, a bad token is refused with REST's code", async () => {
    const graphql = async (query: string, variables: Record<string, unknown>) => {
      const response = await fetch(`${app.apiURL}/graphql`, {
        method: 'POST',
        headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.keys.restKey, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: await response.json() };
    };
    const doc = 'mutation L($authData: Object!) { logInWith(input: { authData: $authData }) { viewer { sessionToken user { objectId } } } }';
    const made = await graphql(doc, { authData: { corp: { id: 'graphql-user', id_token: await idToken('graphql-user') } } });
    expect(made.status).toBe(200);
    const viewer = made.body.data.logInWith.viewer as { sessionToken: string; user: { objectId: string } };
    expect(viewer.sessionToken).toMatch(/^r:/);
    const sdk = await Parse.User.logInWith('corp', { authData: { id: 'graphql-user', id_token: await idToken('graphql-user') } });
    expect(sdk.id).toBe(viewer.user.objectId);
    const refused = await graphql(doc, { authData: { corp: { id: 'graphql-user', id_token: await idToken('someone-else') } } });
    expect(refused).toEqual({
      status: 200,
      body: { data: { logInWith: null }, errors: [expect.objectContaining({ message: 'auth data is invalid for this user.', path: ['logInWith'], extensions: { code: Parse.Error.OBJECT_NOT_FOUND } })] },
    });
  });

  it('refuses a token with a bad signature, a wrong audience, an expired one, another subject and another issuer', async () => {
    const tries: Array<[string, Promise<string>]> = [
      ['invalid signature', idToken('u2', {}, { key: 'rogue' })],
      [`jwt audience invalid. expected: ${AUDIENCE}`, idToken('u2', { aud: 'someone-else' })],
      ['jwt expired', idToken('u2', {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 })],
      ['auth data is invalid for this user.', idToken('someone-else')],
      [`id token not issued by correct OpenID provider - expected: ${idp.url} | from: https://evil.example`, idToken('u2', { iss: 'https://evil.example' })],
    ];
    for (const [message, token] of tries) {
      const refused = await refusal(Parse.User.logInWith('corp', { authData: { id: 'u2', id_token: await token } }));
      expect(refused, message).toEqual({ code: Parse.Error.OBJECT_NOT_FOUND, message });
    }
    // Nothing was made by the refused attempts.
    const users = await app.call('GET', `/users?${new URLSearchParams({ where: JSON.stringify({ 'authData.corp.id': 'u2' }), count: '1', limit: '0' })}`, { master: true });
    expect((users.body as { count: number }).count).toBe(0);
  });

  it('Google and Apple check their own issuers and field names, against the configured keys', async () => {
    const google = await Parse.User.logInWith('google', { authData: { id: 'g-1', id_token: await idp.sign({ iss: 'https://accounts.google.com', aud: 'web-client', sub: 'g-1' }) } });
    expect(google.id).toBeTruthy();
    const apple = await Parse.User.logInWith('apple', { authData: { id: 'a-1', token: await idp.sign({ iss: 'https://appleid.apple.com', aud: AUDIENCE, sub: 'a-1' }) } });
    expect(apple.id).not.toBe(google.id);
    const wrongIssuer = await refusal(Parse.User.logInWith('apple', { authData: { id: 'a-1', token: await idp.sign({ iss: 'https://accounts.google.com', aud: AUDIENCE, sub: 'a-1' }) } }));
    expect(wrongIssuer.message).toBe('id token not issued by correct OpenID provider - expected: https://appleid.apple.com | from: https://accounts.google.com');
    const noToken = await refusal(Parse.User.logInWith('google', { authData: { id: 'g-1' } }));
    expect(noToken).toEqual({ code: Parse.Error.OBJECT_NOT_FOUND, message: 'id token is invalid for this user.' });
  });
});

describe('code and access-token providers', () => {
  it('GitHub: a code is exchanged for a token and the user id; a code works once; a wrong secret is refused', async () => {
    const code = idp.code('github', 4242);
    const user = await Parse.User.logInWith('github', { authData: { code } });
    const stored = await app.call('GET', `/users/${user.id}`, { master: true });
    expect((stored.body as { authData: { github: Record<string, unknown> } }).authData.github).toEqual({ id: 4242, access_token: expect.any(String) });
    const again = await Parse.User.logInWith('github', { authData: { code: idp.code('github', 4242) } });
    expect(again.id).toBe(user.id);
    const reused = await refusal(Parse.User.logInWith('github', { authData: { code } }));
    expect(reused).toEqual({ code: Parse.Error.OBJECT_NOT_FOUND, message: 'The code passed is incorrect or expired.' });
    const noCode = await refusal(Parse.User.logInWith('github', { authData: { id: 4242, access_token: idp.accessToken('github', 4242) } }));
    expect(noCode).toEqual({ code: Parse.Error.VALIDATION_ERROR, message: 'GitHub code is required.' });
  });

  it('Microsoft: the exchange carries the redirect_uri, and the user is read with the token', async () => {
    const user = await Parse.User.logInWith('microsoft', { authData: { code: idp.code('microsoft', 'ms-1', 'https://app.example/cb'), redirect_uri: 'https://app.example/cb' } });
    expect(user.id).toBeTruthy();
    const wrongRedirect = await refusal(Parse.User.logInWith('microsoft', { authData: { code: idp.code('microsoft', 'ms-1', 'https://app.example/cb'), redirect_uri: 'https://evil.example/cb' } }));
    expect(wrongRedirect.code).toBe(Parse.Error.OBJECT_NOT_FOUND);
    expect(wrongRedirect.message).toContain('authorization code is invalid');
  });

  it('Facebook: a classic access token is checked with the Graph API (with appsecret_proof) and a Limited Login token with the keys', async () => {
    const user = await Parse.User.logInWith('facebook', { authData: { id: '555', access_token: idp.accessToken('facebook', '555') } });
    expect(user.id).toBeTruthy();
    const other = await refusal(Parse.User.logInWith('facebook', { authData: { id: '556', access_token: idp.accessToken('facebook', '555') } }));
    expect(other).toEqual({ code: Parse.Error.OBJECT_NOT_FOUND, message: 'Facebook auth is invalid for this user.' });
    const limited = await Parse.User.logInWith('facebook', { authData: { id: '555', token: await idp.sign({ iss: 'https://www.facebook.com', aud: CLIENT.facebookAppId, sub: '555' }) } });
    expect(limited.id).toBe(user.id);
  });
});

describe('linking, anonymous users and the app settings', () => {
  it('an anonymous user signs up with a username and password and is no longer anonymous', async () => {
    const anonymous = await Parse.AnonymousUtils.logIn();
    expect(Parse.AnonymousUtils.isLinked(anonymous)).toBe(true);
    anonymous.setUsername('upgraded');
    anonymous.setPassword('upgraded-pw');
    await anonymous.save(null, { sessionToken: anonymous.getSessionToken()! });
    const stored = await app.call('GET', `/users/${anonymous.id}`, { master: true });
    expect((stored.body as { authData?: unknown }).authData).toBeUndefined();
    const loggedIn = await Parse.User.logIn('upgraded', 'upgraded-pw');
    expect(loggedIn.id).toBe(anonymous.id);
  });

  it('a user links a provider; the same provider id cannot be linked to a second user (208)', async () => {
    const alice = await Parse.User.signUp('alice-links', 'pw', {});
    await alice.linkWith('corp', { authData: { id: 'linked-1', id_token: await idToken('linked-1') } }, { sessionToken: alice.getSessionToken()! });
    const viaProvider = await Parse.User.logInWith('corp', { authData: { id: 'linked-1', id_token: await idToken('linked-1') } });
    expect(viaProvider.id).toBe(alice.id);
    const bob = await Parse.User.signUp('bob-links', 'pw', {});
    const taken = await refusal(bob.linkWith('corp', { authData: { id: 'linked-1', id_token: await idToken('linked-1') } }, { sessionToken: bob.getSessionToken()! }));
    expect(taken).toEqual({ code: Parse.Error.ACCOUNT_ALREADY_LINKED, message: 'this auth is already used' });
    // Re-saving data the user already holds is not checked again (Parse Server's hasMutatedAuthData):
    // GitHub's stored {id, access_token} would be refused if checked (a code is required); changed, it is.
    // (The provider login ended alice's first session: one session per installation, as Parse Server.)
    const token = viaProvider.getSessionToken()!;
    await viaProvider.linkWith('github', { authData: { code: idp.code('github', 7007) } }, { sessionToken: token });
    const stored = (await app.call('GET', `/users/${alice.id}`, { master: true })).body as { authData: { github: Record<string, unknown> } };
    expect(stored.authData.github.id).toBe(7007);
    const resave = await app.call('PUT', `/users/${alice.id}`, { sessionToken: token, body: { authData: stored.authData } });
    expect(resave.body).toEqual({ updatedAt: expect.any(String), authDataResponse: {} });
    const changed = await app.call('PUT', `/users/${alice.id}`, { sessionToken: token, body: { authData: { github: { ...stored.authData.github, access_token: 'forged' } } } });
    expect(changed.body).toEqual({ code: 142, error: 'GitHub code is required.' });
  });

  it('refuses providers the app does not have (252), unconfigured built-ins (101), and anonymous users when turned off', async () => {
    const unknown = await app.call('POST', '/users', { body: { authData: { myspace: { id: 'x', token: 'y' } } } });
    expect(unknown.body).toEqual({ code: 252, error: 'This authentication method is unsupported.' });
    const other = await createTestApp(server);
    const unconfigured = await other.call('POST', '/users', { body: { authData: { apple: { id: 'x', token: 'y' } } } });
    expect(unconfigured.status).toBe(404);
    expect(unconfigured.body).toEqual({ code: 101, error: 'Apple auth is not configured.' });
    await server.platform.services.backendApps.configure(other.appId, { enableAnonymousUsers: false });
    const anonymous = await other.call('POST', '/users', { body: { authData: { anonymous: { id: crypto.randomUUID() } } } });
    expect(anonymous.body).toEqual({ code: 252, error: 'This authentication method is unsupported.' });
  });

  it('names the option that is wrong in a provider setting', async () => {
    const refusedSetting = async (auth: unknown) => {
      try {
        await server.platform.services.backendApps.configure(app.appId, { auth });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected the setting to be refused');
    };
    expect(await refusedSetting({ github: { clientId: 'x' } })).toContain('auth.github.clientSecret is required');
    expect(await refusedSetting({ google: { clientId: 'x', jwksUri: 'ftp://keys' } })).toContain('auth.google.jwksUri must be an http(s) URL');
    expect(await refusedSetting({ corp: { issuer: 'https://x' } })).toContain('auth.corp.oidc must be true');
    expect(await refusedSetting({ apple: { clientId: 'x', teamId: 'y' } })).toContain('auth.apple has no option "teamId"');
  });
});

describe('the dashboard', () => {
  it("shows the app's sign-in providers on its server settings page", async () => {
    const cookie = await dashboardCookie(server);
    const text = await (await fetch(`${server.url}/dashboard/apps/${app.appId}/settings`, { headers: { cookie } })).text();
    expect(text).toContain('Sign-in providers');
    expect(text).toMatch(/name="enableAnonymousUsers"[^>]* checked>/);
    expect(text).toMatch(/&quot;corp&quot;: \{\s+&quot;oidc&quot;: true,\s+&quot;issuer&quot;: &quot;http:\/\/127\.0\.0\.1/);
  });
});

describe('where provider requests may go', () => {
  it('an app cannot point a provider at a loopback or private address the operator did not allow', async () => {
    // A key server on loopback that would answer correctly: the address alone is refused.
    let asked = 0;
    const keys = http.createServer((_req, res) => {
      asked++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = keys.address() as AddressInfo;
      const other = await createTestApp(server);
      await server.platform.services.backendApps.configure(other.appId, { auth: { google: { clientId: AUDIENCE, jwksUri: `http://127.0.0.1:${port}/jwks` } } });
      const answer = await other.call('POST', '/users', { body: { authData: { google: { id: 'g-9', id_token: await idp.sign({ iss: 'https://accounts.google.com', aud: AUDIENCE, sub: 'g-9' }) } } } });
      expect(answer.body).toMatchObject({ code: 101 });
      expect((answer.body as { error: string }).error).toContain('127.0.0.1 is not a public address');
      expect(asked).toBe(0);
    } finally {
      await new Promise((resolve) => keys.close(resolve));
    }
  });

  it('a provider endpoint on an allowed host that redirects to loopback or a private address is refused, and nothing reaches it', async () => {
    const other = await createTestApp(server);
    const targets = [`${trap.url}/x`, `http://localhost:${trap.port}/x`, ...LOOPBACK_IN_IPV6.map((host) => `http://${host}:${trap.port}/x`), 'http://10.0.0.7/x'];
    for (const status of [301, 302, 307, 308]) {
      for (const target of targets) {
        await server.platform.services.backendApps.configure(other.appId, {
          auth: {
            google: { clientId: AUDIENCE, jwksUri: redirector.to(target, status, `/jwks/${status}/${encodeURIComponent(target)}`) },
            github: { clientId: CLIENT.id, clientSecret: CLIENT.secret, tokenUrl: redirector.to(target, status), userUrl: redirector.to(target, status) },
          },
        });
        const google = await other.call('POST', '/users', { body: { authData: { google: { id: 'g-7', id_token: await idp.sign({ iss: 'https://accounts.google.com', aud: AUDIENCE, sub: 'g-7' }) } } } });
        expect(google.body, `${status} → ${target}`).toMatchObject({ code: 101, error: expect.stringMatching(/redirect/) });
        const github = await other.call('POST', '/users', { body: { authData: { github: { code: 'a-code' } } } });
        expect(github.body, `${status} → ${target}`).toMatchObject({ code: 101, error: expect.stringMatching(/GitHub could not be reached .*redirect/) });
      }
    }
    expect(redirector.hits).toBeGreaterThan(0);
    expect(trap.hits).toBe(0);
  });
});

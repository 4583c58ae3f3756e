import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * An OAuth client's own web server on loopback, as the MCP authorization tests need it:
 * `/callback` is its redirect URI (each arrival is handed to the next waiter), `/client.json` its
 * client metadata document. Over HTTPS when given a key and certificate (a client metadata document
 * URL must be https for clients that follow the draft strictly, such as the Python SDK).
 */
export interface ClientSite {
  base: string;
  callback: string;
  documentUrl: string;
  /** How many times the document was fetched. */
  documentFetches: number;
  nextCallback(): Promise<URL>;
  close(): Promise<void>;
}

/**
 * A public client's metadata document naming `clientName` (Client ID Metadata Documents): its
 * `client_id` is the document's own URL and its redirect URI the site's callback.
 */
export const clientDocument =
  (clientName: string) =>
  ({ documentUrl, callback }: { documentUrl: string; callback: string }) => ({
    client_id: documentUrl,
    client_name: clientName,
    redirect_uris: [callback],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });

export async function startClientSite(
  document: (site: { documentUrl: string; callback: string }) => unknown,
  tls?: { key: string; cert: string },
): Promise<ClientSite> {
  const waiting: Array<(url: URL) => void> = [];
  const arrived: URL[] = [];
  let site!: ClientSite;
  const handler: http.RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', site.base);
    if (url.pathname === '/client.json') {
      site.documentFetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document(site)));
      return;
    }
    if (url.pathname === '/callback') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
      const waiter = waiting.shift();
      if (waiter) waiter(url);
      else arrived.push(url);
      return;
    }
    res.writeHead(404).end();
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  site = {
    base,
    callback: `${base}/callback`,
    documentUrl: `${base}/client.json`,
    documentFetches: 0,
    nextCallback: () => {
      const ready = arrived.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return site;
}

/** Signs in on the sign-in page the dashboard sent the browser to, with an account token. */
export async function signInIfAsked(page: Page, token: string): Promise<void> {
  if (!new URL(page.url()).pathname.startsWith('/dashboard/sign-in')) return;
  await page.fill('#token', token);
  await Promise.all([page.waitForURL((url) => url.pathname === '/dashboard/oauth/authorize'), page.click('form[action="/dashboard/sign-in"] button[type=submit]')]);
}

/**
 * Opens an authorization URL in Chromium, signs in with `token` when asked, checks what the consent
 * page shows (the client's name as text, the redirect host), picks the access and approves (or
 * denies). Returns the URL the browser came back to on `site`.
 */
export async function consent(
  context: BrowserContext,
  authorizationUrl: URL,
  site: ClientSite,
  token: string,
  choice: { access: 'read' | 'full'; decision?: 'approve' | 'deny'; expectName?: string },
): Promise<URL> {
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl.href);
    await signInIfAsked(page, token);
    if (choice.expectName !== undefined) {
      // The client's own name, as text: its markup is not markup here.
      expect(await page.textContent('#client-name')).toBe(choice.expectName);
      expect(await page.locator('#client-name b').count()).toBe(0);
    }
    expect(await page.textContent('#redirect-host')).toBe(new URL(site.callback).host);
    await page.check(`input[name=access][value=${choice.access}]`);
    const back = site.nextCallback();
    await page.click(`button[name=decision][value=${choice.decision ?? 'approve'}]`);
    return await back;
  } finally {
    await page.close();
  }
}

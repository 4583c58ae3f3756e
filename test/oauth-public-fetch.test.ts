import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetadataDocuments } from '../src/platform/oauth/metadataDocuments.js';
import { OutboundClient } from '../src/shared/outbound/client.js';
import { LOOPBACK_IN_IPV6, startRedirector, startTrap, type Redirector, type Trap } from './helpers/outboundTargets.js';

/*
 * Client ID Metadata Documents name a URL Backyard fetches: it must not become a way into the
 * machine's own network (SSRF), nor tell whoever names it what listens where. Each refused address
 * is refused before any byte is sent (the trap listener counts), and every failure reads the same.
 */

const UNUSABLE = /^The client metadata document that the client_id names could not be used\. It must be at an https address on the internet and answer HTTP 200, without redirects, with JSON of at most 5120 bytes: client metadata \(RFC 7591\) giving that same URL as its client_id, its redirect_uris, and token_endpoint_auth_method none\.$/;

let trap: Trap;
let redirector: Redirector;
let site: http.Server;
let siteUrl: string;
let closedUrl: string;

beforeAll(async () => {
  trap = await startTrap();
  redirector = await startRedirector();
  // A loopback client's site: /client.json is a good document; every other path fails in its own way (the marker must never be shown).
  site = http.createServer((req, res) => {
    const own = `${siteUrl}${req.url}`;
    if (req.url === '/wrong') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_id: 'https://marker-7f3a.example/c.json', redirect_uris: ['https://marker-7f3a.example/cb'] }));
    if (req.url === '/secret-method') return res.writeHead(200).end(JSON.stringify({ client_id: own, redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }));
    if (req.url === '/bad-redirect') return res.writeHead(200).end(JSON.stringify({ client_id: own, redirect_uris: ['javascript:marker-7f3a'] }));
    if (req.url === '/html') return res.writeHead(200).end('<html>marker-7f3a</html>');
    if (req.url === '/big') return res.writeHead(200).end(JSON.stringify({ client_id: own, redirect_uris: ['https://app.example/cb'], client_name: 'x'.repeat(6000) }));
    if (req.url === '/missing') return res.writeHead(404).end('marker-7f3a');
    if (req.url === '/slow') return;
    res.writeHead(200).end(JSON.stringify({ client_id: own, client_name: 'Local', redirect_uris: ['http://127.0.0.1:9/cb'] }));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const closed = await startTrap();
  await closed.close();
  closedUrl = `${closed.url}/client.json`;
});

afterAll(async () => {
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
  await redirector?.close();
  await trap?.close();
});

describe('fetching a client metadata document', () => {
  it('refuses private and loopback addresses in every spelling before sending anything, in the one text', async () => {
    const documents = new MetadataDocuments();
    for (const url of ['https://10.0.0.1/client.json', 'https://169.254.169.254/latest/meta-data', 'https://[fd00::1]/c.json', 'https://192.168.1.1/c.json', 'https://[64:ff9b::a00:1]/c.json']) {
      await expect(documents.get(url), url).rejects.toThrow(UNUSABLE);
    }
    // Loopback is not even tried unless the operator allows it; NAT64 and 6to4 spellings are not
    // loopback hosts by name, and are refused by the outbound client for their address.
    for (const host of ['127.0.0.1', 'localhost', 'app.localhost', ...LOOPBACK_IN_IPV6]) {
      for (const scheme of ['http', 'https']) {
        const url = new URL(`${scheme}://${host}:${trap.port}/client.json`).href;
        const expected = /^\[(64|2002):/.test(host) ? (scheme === 'https' ? UNUSABLE : /must use https/) : /loopback host/;
        await expect(documents.get(url), url).rejects.toThrow(expected);
      }
    }
    await expect(documents.get('http://app.example/client.json')).rejects.toThrow(/must use https/);
    expect(trap.hits).toBe(0);
  });

  it('with loopback clients allowed: reads a loopback document, and says every failure in the same words without repeating the document', async () => {
    const fetch = new OutboundClient({ allowLoopback: () => true }).fetch;
    const documents = new MetadataDocuments({ fetch, loopbackClients: () => true, limits: { timeoutMs: 1000 } });
    expect(await documents.get(`${siteUrl}/client.json`)).toMatchObject({ clientName: 'Local', kind: 'metadata-document' });
    // A closed port, a 404, a page, a document too large, no answer, a redirect (even to the document
    // itself), documents naming another client, a secret, a script as redirect URI: one text, and
    // nothing of what arrived in it.
    const failures = [closedUrl, `${siteUrl}/missing`, `${siteUrl}/html`, `${siteUrl}/big`, `${siteUrl}/slow`, redirector.to(`${siteUrl}/client.json`), `${siteUrl}/wrong`, `${siteUrl}/secret-method`, `${siteUrl}/bad-redirect`];
    for (const url of failures) await expect(documents.get(url), url).rejects.toThrow(UNUSABLE);
  });
});

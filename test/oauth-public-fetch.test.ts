import { describe, expect, it } from 'vitest';
import { publicFetch } from '../src/platform/oauth/publicFetch.js';
import { publicOnlyLookup } from '../src/shared/publicFetch.js';
import { MetadataDocuments } from '../src/platform/oauth/metadataDocuments.js';

// Client ID Metadata Documents name a URL Backyard fetches: it must not become a way into the
// machine's own network (SSRF). Each address below is refused before any byte is sent.
describe('fetching a client metadata document', () => {
  it.each(['https://10.0.0.1/client.json', 'https://169.254.169.254/latest/meta-data', 'https://[fd00::1]/c.json', 'https://192.168.1.1/c.json'])(
    'refuses %s',
    async (url) => {
      await expect(publicFetch(url)).rejects.toThrow(/is not a public address/);
    },
  );

  it('the connector\'s lookup refuses names that resolve to private or loopback addresses, and passes public ones', async () => {
    // dns.lookup answers an address literal as it is, so the rule is checked here without any resolver.
    const lookup = (name: string, all: boolean) =>
      new Promise<unknown>((resolve, reject) => publicOnlyLookup(name, { all }, (error, address) => (error ? reject(error) : resolve(address))));
    await expect(lookup('10.0.0.5', false)).rejects.toThrow(/10\.0\.0\.5, which is not a public address/);
    await expect(lookup('127.0.0.1', true)).rejects.toThrow(/not a public address/);
    await expect(lookup('::1', false)).rejects.toThrow(/not a public address/);
    await expect(lookup('8.8.8.8', false)).resolves.toBe('8.8.8.8');
    await expect(lookup('8.8.8.8', true)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
  });

  it('answers invalid_client naming the document when its host is private', async () => {
    const documents = new MetadataDocuments({}, publicFetch);
    await expect(documents.get('https://10.1.2.3/client.json')).rejects.toThrow(/https:\/\/10\.1\.2\.3\/client\.json cannot be used: it could not be fetched/);
  });
});

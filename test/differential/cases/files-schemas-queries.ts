import type { Answer, CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: files-schemas-queries: uploads and their names and types, the metadata route,
 * legacy file names; /schemas edge cases; nested keys, sub-queries on missing classes, polygons,
 * date groups, regex sanitizing and purges.
 */

/**
 * The parts of a file URL that do not depend on the server: each side's URL names its own host,
 * mount and application (docs/parse-differences.md, "Files"), so only the last path segment
 * (the stored name, URL-encoded) is compared, with the random 32-hex prefix masked.
 */
const fileTail = (url: unknown): unknown => (typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1).replace(/^[0-9a-f]{32}_/, '<hex>_') : url);

/** An upload's answer with its URL and name reduced to what both servers share. */
function upload(answer: Answer): Answer {
  if (answer.status !== 201) return answer;
  return { status: answer.status, body: { url: fileTail(answer.body.url), name: fileTail(answer.body.name) } };
}

/** GET of an address outside the API's keyed routes: status and body (JSON when it is). */
async function json(address: string): Promise<Answer> {
  const response = await fetch(address);
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** Downloads a file by the URL a server answered: status, content type and bytes as text. */
async function download(url: string): Promise<unknown> {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

export const cases: DiffCase[] = [
  {
    name: 'files: an empty upload answers 130, an upload without a name 122',
    errorText: true,
    run: async (api) => [
      await api.call('POST', '/files/empty.txt', { master: true, body: '', contentType: 'text/plain' }),
      await api.call('POST', '/files', { master: true, body: 'hello', contentType: 'text/plain' }),
      await api.call('POST', '/files/', { master: true, body: 'hello', contentType: 'text/plain' }),
    ],
  },
  {
    name: 'files: a name that needs URL encoding is answered encoded in the URL and served back',
    run: async (api) => {
      const saved = await api.call('POST', `/files/${encodeURIComponent('my file@1.txt')}`, { master: true, body: 'spaced', contentType: 'text/plain' });
      return [upload(saved), await download(saved.body.url)];
    },
  },
  {
    name: 'files: the content type follows the extension; a name without one gets the type\'s',
    run: async (api) => {
      const out: unknown[] = [];
      for (const [name, type] of [
        ['a.pdf', 'application/octet-stream'],
        ['b.png', 'text/plain'],
        ['c.json', 'application/json'],
        ['d.csv', 'text/plain'],
        ['e.ico', 'application/octet-stream'],
        ['f.heic', 'application/octet-stream'],
        ['g.yaml', 'text/plain'],
        ['h.doc', 'application/octet-stream'],
        ['noext', 'image/png'],
        ['noext2', 'application/pdf'],
        ['noext3', 'text/plain'],
      ] as const) {
        const saved = await api.call('POST', `/files/${name}`, { master: true, body: 'x', contentType: type });
        out.push(upload(saved), saved.status === 201 ? await download(saved.body.url) : null);
      }
      return out;
    },
  },
  {
    name: 'files: the metadata route answers {} for an unknown file and an unknown application',
    run: async (api) => {
      const saved = await api.call('POST', '/files/meta.txt', { master: true, body: 'm', contentType: 'text/plain' });
      const base = saved.body.url.slice(0, saved.body.url.lastIndexOf('/'));
      const root = base.slice(0, base.lastIndexOf('/'));
      return [await json(`${base}/metadata/nothing.txt`), await json(`${root}/unknownApp/metadata/${saved.body.name}`), await json(`${base}/metadata/`)];
    },
  },
  {
    name: 'files: the metadata route answers a stored file\'s metadata',
    known: {
      reason: 'Parse Server answers {metadata} only through a files adapter that keeps it (GridFS); its file system adapter (the oracle\'s) answers {}',
      backyard: [{ status: 200, body: { metadata: { owner: 'me' } } }, { status: 200, body: { metadata: {} } }],
    },
    run: async (api) => {
      const tagged = await api.call('POST', '/files/tagged.txt', { master: true, body: { base64: 'aGk=', fileData: { metadata: { owner: 'me' } } } });
      const plain = await api.call('POST', '/files/plain.txt', { master: true, body: 'p', contentType: 'text/plain' });
      const metadataOf = (url: string) => json(`${url.slice(0, url.lastIndexOf('/'))}/metadata/${url.slice(url.lastIndexOf('/') + 1)}`);
      return [await metadataOf(tagged.body.url), await metadataOf(plain.body.url)];
    },
  },
  {
    name: 'files: legacy names (tfss-, a UUID and -) are answered at the old parse.com hosts under the file key',
    run: async (api) => {
      const cls = api.cls('Legacy');
      const file = (name: string) => ({ __type: 'File', name });
      const created = await api.call('POST', `/classes/${cls}`, {
        master: true,
        body: { a: file('tfss-0a1b2c3d-picture one.png'), b: file('5e8f8a4c-1d2e-4f3a-9b8c-7d6e5f4a3b2c-photo.jpg'), c: file('3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c_new.txt') },
      });
      const got = await api.call('GET', `/classes/${cls}/${created.body.objectId}`);
      const legacy = (value: { name: string; url: string }) => {
        const url = new URL(value.url);
        return url.hostname.startsWith('files.parse') ? { name: value.name, url: `${url.protocol}//${url.host}/<fileKey>/${fileTail(value.url)}` } : { name: value.name, url: fileTail(value.url) };
      };
      return [created.status, got.status, legacy(got.body.a), legacy(got.body.b), legacy(got.body.c)];
    },
  },
];

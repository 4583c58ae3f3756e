import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { modernHttpClient } from './helpers/mcpClients.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';

/**
 * Cloud code files: the starting tree, deployCloudCode and getCloudCode,
 * through a real server over REST, and once through an MCP client.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());
afterEach(() => {
  vi.restoreAllMocks();
  server.platform.services.cloudCode.applyStepHook = undefined;
});

type App = Record<string, string> & { appId: string };
type Change = { path: string; operation: 'write' | 'delete'; writeMode?: 'overwrite' | 'append'; data?: string };

let appCount = 0;
const createApp = async (token = server.alice): Promise<App> => {
  const res = await api(server, 'POST', '/backend-apps', { token, body: { appName: `cloud-files-${++appCount}` } });
  expect(res.status, res.text).toBe(201);
  return res.json() as App;
};

const deploy = (appId: string, changes: unknown[], token = server.alice) =>
  api(server, 'POST', `/backend-apps/${encodeURIComponent(appId)}/cloud-code`, { token, body: { changes } });

/** Deploys and expects success; answers `{message, warnings}`. */
/** Warnings that the new code failed to load in its worker; the runtime's suite checks those. */
const LOAD_WARNING = /the new cloud code replaced the old, but the new cloud code failed to load: /;

/** A deploy that must succeed; its warnings leave out load failures, which these files provoke on purpose. */
const deployOk = async (appId: string, changes: Change[]) => {
  const res = await deploy(appId, changes);
  expect(res.status, res.text).toBe(200);
  const answer = res.json() as { message: string; warnings: string[] };
  return { ...answer, warnings: answer.warnings.filter((w) => !LOAD_WARNING.test(w)) };
};

const read = (appId: string, query: Record<string, string | boolean> = {}, token = server.alice) => {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  return api(server, 'GET', `/backend-apps/${encodeURIComponent(appId)}/cloud-code${qs ? `?${qs}` : ''}`, { token });
};

const readOk = async (appId: string, query: Record<string, string | boolean> = {}) => {
  const res = await read(appId, query);
  expect(res.status, res.text).toBe(200);
  expect(res.contentType).toMatch(/^text\/plain/);
  return res.text;
};

const treeOf = (appId: string) => path.join(server.home, 'apps', appId, 'cloud');
const fileOf = (appId: string, treePath: string) => path.join(treeOf(appId), ...treePath.split('/'));
const disk = (appId: string, treePath: string) => fs.readFileSync(fileOf(appId, treePath), 'utf8');

/** Every file and folder of an app's folder with the bytes of each file: to prove nothing changed. */
function snapshot(appId: string): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        result[`${child}/`] = '';
        walk(path.join(dir, entry.name), child);
      } else result[child] = fs.readFileSync(path.join(dir, entry.name)).toString('base64');
    }
  };
  walk(path.join(server.home, 'apps', appId), '');
  return result;
}

const expectError = (res: { status: number; contentType: string; text: string }, status: number, pattern: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(res.contentType).toMatch(/^text\/plain/);
  expect(res.text).toMatch(pattern);
};

const write = (p: string, data: string, writeMode: 'overwrite' | 'append' = 'overwrite'): Change => ({ path: p, operation: 'write', writeMode, data });
const del = (p: string): Change => ({ path: p, operation: 'delete' });

describe('the starting tree of a new app', () => {
  it('holds cloud/main.js with an example function and public/index.html that loads and initialises the SDK', async () => {
    const app = await createApp();
    const listing = await readOk(app.appId);
    const main = disk(app.appId, 'cloud/main.js');
    const page = disk(app.appId, 'public/index.html');
    expect(listing).toBe(
      `=== cloud/main.js (${Buffer.byteLength(main)} bytes) ===\n${main}=== public/index.html (${Buffer.byteLength(page)} bytes) ===\n${page}`,
    );
    // main.js: one example function, using the global Parse, never requiring the SDK.
    expect(main).toContain("Parse.Cloud.define('hello', (request) =>");
    expect(main).not.toMatch(/^\s*(const|let|var|import)\b.*\bparse\b/im);
    expect(main).not.toMatch(/^[^/]*require\(/m);
    // index.html: the SDK from {sdk_script_url}, then initialise in a load handler with the public keys only.
    const sdk = `${server.url}/sdk/parse.min.js`;
    expect(page).toContain(`<script src="${sdk}"></script>`);
    expect(page.indexOf(sdk)).toBeLessThan(page.indexOf('Parse.initialize'));
    expect(page).toMatch(/addEventListener\('load'[\s\S]*Parse\.initialize\("[^"]+", "[^"]+"\)/);
    expect(page).toContain(`Parse.initialize(${JSON.stringify(app.appId)}, ${JSON.stringify(app.javascriptKey)});`);
    expect(page).toContain(`Parse.serverURL = ${JSON.stringify(app.apiURL)};`);
    const keys = (await server.platform.services.backendApps.keys(app.appId))!;
    for (const secret of [keys.restKey, keys.masterKey, keys.webhookKey, keys.fileKey]) {
      expect(page).not.toContain(secret);
      expect(main).not.toContain(secret);
    }
  });

  it('passes every deploy check as it is: redeploying it unchanged gives no warnings', async () => {
    const app = await createApp();
    const main = disk(app.appId, 'cloud/main.js');
    const page = disk(app.appId, 'public/index.html');
    const result = await deployOk(app.appId, [write('cloud/main.js', main), write('public/index.html', page)]);
    expect(result.warnings).toEqual([]);
    expect(result.message).toContain('The cloud code was reloaded.');
  });

  it('the example function runs once deployed', async () => {
    const app = await createApp();
    await deployOk(app.appId, [write('cloud/main.js', '\n// touched\n', 'append')]);
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, {
      token: server.alice,
      body: { requests: [{ method: 'POST', url: '/functions/hello', body: { name: 'Ada' } }] },
    });
    expect(res.status, res.text).toBe(200);
    expect((res.json() as { responses: unknown[] }).responses[0]).toEqual({ code: 200, body: { result: 'Hello, Ada!' } });
  });
});

describe('deployCloudCode: writes and deletes', () => {
  let app: App;
  beforeAll(async () => {
    app = await createApp();
  });

  it('overwrite creates a file and its folders; append adds to the end; the message says what changed, file by file', async () => {
    const fn = "Parse.Cloud.define('double', (request) => request.params.n * 2);\n";
    const before = Buffer.byteLength(disk(app.appId, 'cloud/main.js'));
    const line = "\nrequire('./math/functions/double.js');\n";
    const result = await deployOk(app.appId, [write('cloud/math/functions/double.js', fn), write('cloud/main.js', line, 'append')]);
    expect(result.warnings).toEqual([]);
    expect(result.message.split('\n')).toEqual([
      `wrote cloud/math/functions/double.js (overwrite, ${Buffer.byteLength(fn)} bytes, new file)`,
      `wrote cloud/main.js (append, ${Buffer.byteLength(line)} bytes added, now ${before + Buffer.byteLength(line)} bytes)`,
      'Kept as version 2.',
      'The cloud code was reloaded.',
    ]);
    expect(disk(app.appId, 'cloud/math/functions/double.js')).toBe(fn);
    expect(disk(app.appId, 'cloud/main.js').endsWith(line)).toBe(true);
    expect(await readOk(app.appId, { path: 'cloud/math/functions/double.js' })).toBe(fn);
    // The function is loaded: the worker was reloaded with the new files.
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, {
      token: server.alice,
      body: { requests: [{ method: 'POST', url: '/functions/double', body: { n: 21 } }] },
    });
    expect((res.json() as { responses: unknown[] }).responses[0]).toEqual({ code: 200, body: { result: 42 } });
  });

  it('overwrite replaces a file; append to a missing file creates it; changes apply in order', async () => {
    await deployOk(app.appId, [write('public/notes.txt', 'one\n')]);
    const result = await deployOk(app.appId, [
      write('public/notes.txt', 'two\n'),
      write('public/notes.txt', 'three\n', 'append'),
      write('public/log/new.txt', 'first line\n', 'append'),
    ]);
    expect(disk(app.appId, 'public/notes.txt')).toBe('two\nthree\n');
    expect(disk(app.appId, 'public/log/new.txt')).toBe('first line\n');
    expect(result.message).toContain('wrote public/notes.txt (overwrite, 4 bytes)');
    expect(result.message).toContain('wrote public/notes.txt (append, 6 bytes added, now 10 bytes)');
    expect(result.message).toContain('wrote public/log/new.txt (append, 11 bytes, new file)');
    expect(result.message).toContain('Nothing under cloud/ changed, so the cloud code was not reloaded.');
  });

  it('writes UTF-8 and counts bytes, not characters; an empty data makes an empty file', async () => {
    const result = await deployOk(app.appId, [write('public/héllo.txt', 'żółw 🐢'), write('public/empty.txt', '')]);
    expect(result.message).toContain(`wrote public/héllo.txt (overwrite, ${Buffer.byteLength('żółw 🐢')} bytes, new file)`);
    expect(disk(app.appId, 'public/héllo.txt')).toBe('żółw 🐢');
    expect(fs.statSync(fileOf(app.appId, 'public/empty.txt')).size).toBe(0);
  });

  it('delete removes a file, a whole folder, or empties a root; a folder path may end with /', async () => {
    await deployOk(app.appId, [write('public/site/a.html', 'a'), write('public/site/css/b.css', 'bb'), write('public/site/c.txt', 'ccc')]);
    const result = await deployOk(app.appId, [del('public/site/c.txt'), del('public/site/css/')]);
    expect(result.message.split('\n').slice(0, 2)).toEqual(['deleted public/site/c.txt (3 bytes)', 'deleted folder public/site/css/ (1 file, 2 bytes)']);
    expect(fs.existsSync(fileOf(app.appId, 'public/site/c.txt'))).toBe(false);
    expect(fs.existsSync(fileOf(app.appId, 'public/site/css'))).toBe(false);
    expect(disk(app.appId, 'public/site/a.html')).toBe('a');

    const other = await createApp();
    const emptied = await deployOk(other.appId, [del('public')]);
    expect(emptied.message).toMatch(/^emptied public\/ \(1 file, \d+ bytes\)/);
    expect(fs.readdirSync(fileOf(other.appId, 'public'))).toEqual([]);
    expect(await readOk(other.appId, { path: 'public' })).toBe('(public/ is empty)\n');
  });

  it('a folder can be replaced by a file and a file by a folder in one deploy', async () => {
    await deployOk(app.appId, [write('public/swap/x.txt', 'x'), write('public/plain', 'p')]);
    await deployOk(app.appId, [del('public/swap'), write('public/swap', 'now a file'), del('public/plain'), write('public/plain/inside.txt', 'now a folder')]);
    expect(disk(app.appId, 'public/swap')).toBe('now a file');
    expect(disk(app.appId, 'public/plain/inside.txt')).toBe('now a folder');
  });

  it('deleting a path that does not exist is a 400 that says so', async () => {
    const res = await deploy(app.appId, [del('public/nothing-here.txt')]);
    expectError(res, 400, /changes\[0\] \(public\/nothing-here\.txt\) deletes public\/nothing-here\.txt, which does not exist/);
  });

  it('a write needs writeMode and data, a delete takes neither: 400 naming the change', async () => {
    expectError(await deploy(app.appId, [write('public/a.txt', 'a'), { path: 'public/b.txt', operation: 'write', data: 'b' }]), 400, /changes\[1\] \(public\/b\.txt\) is a write without writeMode/);
    expectError(await deploy(app.appId, [{ path: 'public/b.txt', operation: 'write', writeMode: 'append' }]), 400, /changes\[0\] \(public\/b\.txt\) is a write without data/);
    expectError(await deploy(app.appId, [{ path: 'public/notes.txt', operation: 'delete', data: 'x' }]), 400, /changes\[0\] \(public\/notes\.txt\) is a delete, which takes no writeMode or data/);
    expectError(await deploy(app.appId, [{ path: 'public/x', operation: 'rename' }]), 400, /operation/);
    expectError(await deploy(app.appId, []), 400, /changes/);
    expect(fs.existsSync(fileOf(app.appId, 'public/a.txt'))).toBe(false);
  });

  it('refuses a write onto a folder, or below a file', async () => {
    expectError(await deploy(app.appId, [write('public/site', 'x')]), 400, /public\/site, which is a folder/);
    expectError(await deploy(app.appId, [write('public/notes.txt/inner.txt', 'x')]), 400, /needs the folder public\/notes\.txt, but public\/notes\.txt is a file/);
  });
});

describe('paths', () => {
  let app: App;
  beforeAll(async () => {
    app = await createApp();
  });

  const bad: Array<[string, RegExp]> = [
    ['', /path is empty/],
    ['/cloud/main.js', /is absolute/],
    ['cloud/../public/x.js', /has a "\." or "\.\." segment/],
    ['cloud/./x.js', /has a "\." or "\.\." segment/],
    ['../outside.js', /has a "\." or "\.\." segment/],
    ['cloud//x.js', /has an empty segment/],
    ['cloud\\x.js', /contains a backslash/],
    ['cloud/x\u0000.js', /contains a NUL character/],
    ['cloud/x\n.js', /contains a control character/],
    [`cloud/${'a'.repeat(256)}.js`, /at most 255/],
  ];

  it.each(bad)('deploy refuses %j with a 400 that names the problem', async (p, pattern) => {
    const res = await deploy(app.appId, [write('public/fine.txt', 'ok'), write(p, 'x')]);
    expectError(res, 400, pattern);
    expect(res.text).toContain('changes[1].path');
    expect(fs.existsSync(fileOf(app.appId, 'public/fine.txt'))).toBe(false);
  });

  it.each(bad.filter(([p]) => p !== ''))('getCloudCode refuses %j with a 400', async (p, pattern) => {
    expectError(await read(app.appId, { path: p }), 400, pattern);
  });

  it('a write path must not end with /', async () => {
    expectError(await deploy(app.appId, [write('public/dir/', 'x')]), 400, /ends with \/, but a write needs a file path/);
  });

  const outside = ['secrets.txt', 'data.db', 'package.json', 'Cloud/main.js', 'publicity/x.html', 'files/a'];
  it.each(outside)('a path outside cloud/ and public/ (%s) is a 403, for deploy and getCloudCode', async (p) => {
    expectError(await deploy(app.appId, [write(p, 'x')]), 403, /outside the cloud code tree: every path starts with cloud\/ .* or public\//);
    expectError(await deploy(app.appId, [del(p)]), 403, /outside the cloud code tree/);
    expectError(await read(app.appId, { path: p }), 403, /outside the cloud code tree/);
    expect(fs.existsSync(path.join(server.home, 'apps', app.appId, p))).toBe(false);
  });

  it('writing to a root itself is a 403', async () => {
    expectError(await deploy(app.appId, [write('cloud', 'x')]), 403, /writes to the root folder cloud\/ itself/);
    expectError(await deploy(app.appId, [write('public', 'x')]), 403, /writes to the root folder public\/ itself/);
  });
});

describe('all or none', () => {
  it('a batch with one bad change leaves every file as it was, byte for byte', async () => {
    const app = await createApp();
    await deployOk(app.appId, [write('public/keep.txt', 'keep me'), write('public/old/a.txt', 'a')]);
    const before = snapshot(app.appId);
    const batches: Change[][] = [
      [write('public/keep.txt', 'changed'), del('public/old'), write('cloud/new.js', '1;'), write('../escape.txt', 'x')],
      [write('public/keep.txt', 'changed'), del('public/old'), write('elsewhere/x.txt', 'x')],
      [write('public/keep.txt', 'changed'), write('cloud/main.js', 'x', 'append'), del('public/missing.txt')],
      [del('public/old'), write('public/big.txt', 'x'.repeat(1024 * 1024 + 1))],
    ];
    for (const changes of batches) {
      const res = await deploy(app.appId, changes);
      expect([400, 403]).toContain(res.status);
      expect(snapshot(app.appId)).toEqual(before);
    }
  });

  it('when any step fails half-way, what was done is undone, and no staging folder is left', async () => {
    const app = await createApp();
    await deployOk(app.appId, [write('public/keep.txt', 'keep me'), write('public/old/a.txt', 'a'), write('public/gone.txt', 'g')]);
    const before = snapshot(app.appId);
    const reload = vi.spyOn(server.platform.services.cloud, 'reload');
    const changes = [
      del('public/old'),
      del('public/gone.txt'),
      write('public/keep.txt', 'changed'),
      write('public/new/deep/file.txt', 'new'),
      write('cloud/main.js', '\n// more\n', 'append'),
    ];
    // Count the steps of the commit on a twin app, then fail at each one in turn.
    let count = 0;
    server.platform.services.cloudCode.applyStepHook = () => void count++;
    const twin = await createApp();
    await deployOk(twin.appId, [write('public/keep.txt', 'keep me'), write('public/old/a.txt', 'a'), write('public/gone.txt', 'g')]);
    count = 0;
    await deployOk(twin.appId, changes);
    expect(count).toBe(9); // 2 moves away, 2 new folders, 2 × (backup + write) for replaced files, 1 new file
    reload.mockClear();

    for (let failAt = 0; failAt < count; failAt++) {
      server.platform.services.cloudCode.applyStepHook = (step) => {
        if (step === failAt) throw new Error('simulated disk failure');
      };
      const res = await deploy(app.appId, changes);
      expect(res.status, `failing at step ${failAt}`).toBe(500);
      expect(snapshot(app.appId), `failing at step ${failAt}`).toEqual(before);
      expect(fs.readdirSync(path.join(server.home, 'apps', app.appId)).filter((n) => n.startsWith('.cloud-deploy-'))).toEqual([]);
    }
    expect(reload).not.toHaveBeenCalled();
    // The next deploy works.
    server.platform.services.cloudCode.applyStepHook = undefined;
    await deployOk(app.appId, changes);
    expect(disk(app.appId, 'public/keep.txt')).toBe('changed');
    expect(disk(app.appId, 'public/new/deep/file.txt')).toBe('new');
    expect(fs.existsSync(fileOf(app.appId, 'public/old'))).toBe(false);
  });

  it('concurrent deploys to one app do not interleave', async () => {
    const app = await createApp();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => deploy(app.appId, [write('public/counter.txt', `${i}\n`, 'append'), write(`public/each/${i}.txt`, `${i}`)])),
    );
    for (const res of results) expect(res.status, res.text).toBe(200);
    expect(disk(app.appId, 'public/counter.txt').split('\n').filter(Boolean).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect(fs.readdirSync(fileOf(app.appId, 'public/each')).length).toBe(8);
  });
});

describe('limits', () => {
  const MiB = 1024 * 1024;

  it('a file may hold 1 MiB after the change, not more (overwrite or append)', async () => {
    const app = await createApp();
    await deployOk(app.appId, [write('public/exact.txt', 'x'.repeat(MiB))]);
    expect(fs.statSync(fileOf(app.appId, 'public/exact.txt')).size).toBe(MiB);
    expectError(await deploy(app.appId, [write('public/exact.txt', 'y', 'append')]), 400, /public\/exact\.txt would be 1048577 bytes after this deploy, over the limit of 1 MiB/);
    // Multi-byte characters count as bytes.
    expectError(await deploy(app.appId, [write('public/wide.txt', 'é'.repeat(MiB / 2 + 1))]), 400, /over the limit of 1 MiB/);
    expect(fs.statSync(fileOf(app.appId, 'public/exact.txt')).size).toBe(MiB);
  });

  it('the whole tree may hold 20 MiB after the change', async () => {
    const app = await createApp();
    // Fill the tree on disk (the request body limit would need several calls).
    fs.mkdirSync(fileOf(app.appId, 'public/fill'), { recursive: true });
    const current = (dir: string): number =>
      fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? current(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);
    for (let i = 0; i < 19; i++) fs.writeFileSync(fileOf(app.appId, `public/fill/${i}.bin`), Buffer.alloc(MiB, 65));
    const room = 20 * MiB - (current(fileOf(app.appId, 'cloud')) + current(fileOf(app.appId, 'public')));
    await deployOk(app.appId, [write('public/last.txt', 'z'.repeat(room))]);
    expectError(await deploy(app.appId, [write('public/one-more.txt', 'z')]), 400, /would hold 20971521 bytes after this deploy, over the limit of 20 MiB/);
    // Freeing space in the same call makes room.
    await deployOk(app.appId, [del('public/fill/0.bin'), write('public/one-more.txt', 'z')]);
  });

  it('at most 200 changes per call', async () => {
    const app = await createApp();
    const many = (n: number) => Array.from({ length: n }, (_, i) => write(`public/many/${i}.txt`, `${i}`));
    await deployOk(app.appId, many(200));
    expectError(await deploy(app.appId, many(201)), 400, /changes has 201 entries, over the limit of 200 changes per call/);
  });
});

describe('warnings', () => {
  it('code that throws while loading: the answer says its functions now fail and names the file and line', async () => {
    const app = await createApp();
    const res = await deploy(app.appId, [
      { path: 'cloud/main.js', operation: 'write', writeMode: 'overwrite', data: "require('./tools/boom.js');\n" },
      { path: 'cloud/tools/boom.js', operation: 'write', writeMode: 'overwrite', data: "const x = 1;\nthrow new Error('boom at load');\n" },
    ]);
    expect(res.status, res.text).toBe(200);
    const { message, warnings } = res.json() as { message: string; warnings: string[] };
    expect(message).toContain('The new cloud code is live but failed to load: its functions, jobs and triggers fail until you fix it (see warnings).');
    expect(warnings).toContainEqual(expect.stringMatching(/failed to load: cloud\/tools\/boom\.js:2:\d+: Error: boom at load\. Until a deploy that loads, every function, job and trigger of this app answers 141/));
  });

  let app: App;
  beforeAll(async () => {
    app = await createApp();
  });
  const sdk = () => `${server.url}/sdk/parse.min.js`;
  const fn = (name: string) => `Parse.Cloud.define('${name}', () => '${name}');\n`;

  describe('rule 2: new cloud files are required by cloud/main.js', () => {
    it('warns about a new file that cloud/main.js does not require, with the line to add', async () => {
      const { warnings } = await deployOk(app.appId, [write('cloud/todo/functions/lonely.js', fn('lonely'))]);
      expect(warnings).toEqual([
        "cloud/todo/functions/lonely.js is new, but cloud/main.js does not require it, so it never runs. Append require('./todo/functions/lonely.js'); to cloud/main.js (writeMode \"append\").",
      ]);
      // The file is kept, and redeploying it (no longer new) gives no warning.
      expect((await deployOk(app.appId, [write('cloud/todo/functions/lonely.js', fn('lonely'))])).warnings).toEqual([]);
    });

    it.each([
      ["require('./w/a.js');", 'a'],
      ['require("./w/b.js");', 'b'],
      ["import './w/c.js';", 'c'],
      ["require('./w/d');", 'd'],
      ["const e = require(`./w/e.js`);", 'e'],
    ])('accepts %s', async (line, name) => {
      const { warnings } = await deployOk(app.appId, [write(`cloud/w/${name}.js`, fn(name)), write('cloud/main.js', `\n${line}\n`, 'append')]);
      expect(warnings).toEqual([]);
      await deployOk(app.appId, [write('cloud/main.js', disk(app.appId, 'cloud/main.js').replace(`\n${line}\n`, ''))]);
    });

    it('accepts a file required through another file, and does not count a commented-out require', async () => {
      const { warnings } = await deployOk(app.appId, [
        write('cloud/chain/helper.js', 'module.exports = { twice: (n) => n * 2 };\n'),
        write('cloud/chain/functions/twice.js', "const { twice } = require('../helper.js');\nParse.Cloud.define('twice', (r) => twice(r.params.n));\n"),
        write('cloud/chain/functions/ghost.js', fn('ghost')),
        write('cloud/main.js', "\nrequire('./chain/functions/twice.js');\n// require('./chain/functions/ghost.js');\n", 'append'),
      ]);
      expect(warnings).toEqual([expect.stringMatching(/^cloud\/chain\/functions\/ghost\.js is new, but cloud\/main\.js does not require it/)]);
    });

    it('does not warn about new files outside cloud/ or that are not JavaScript', async () => {
      const { warnings } = await deployOk(app.appId, [write('cloud/data/config.json', '{"a":1}'), write('public/x.js', 'console.log(1);')]);
      expect(warnings).toEqual([]);
    });

    it('warns when there is no cloud/main.js to load the cloud files', async () => {
      const other = await createApp();
      const { warnings } = await deployOk(other.appId, [del('cloud/main.js'), write('cloud/f.js', fn('f'))]);
      expect(warnings).toEqual(['There is no cloud/main.js, so no cloud code runs. Write cloud/main.js with a require line for each file to load.']);
    });
  });

  describe('rule 2: cloud files do not require the data SDK', () => {
    it.each([
      ["const Parse = require('parse/node');", '"parse/node"'],
      ['const Parse = require("parse");', '"parse"'],
      ["import Parse from 'parse/node.js';", '"parse/node.js"'],
    ])('warns about %s', async (line, named) => {
      const { warnings } = await deployOk(app.appId, [write('cloud/main.js', `\n${line}\n`, 'append')]);
      expect(warnings).toEqual([`cloud/main.js requires the data SDK (${named}). Remove that require or import: in cloud code Parse is already a global, set up for this app.`]);
      await deployOk(app.appId, [write('cloud/main.js', disk(app.appId, 'cloud/main.js').replace(`\n${line}\n`, ''))]);
    });

    it('does not warn about the word in a comment or a string, or about other modules', async () => {
      const { warnings } = await deployOk(app.appId, [
        write('cloud/quiet.js', "// never require('parse/node') here\nconst s = \"require('parse')\";\nconst path = require('path');\n"),
        write('cloud/main.js', "\nrequire('./quiet.js');\n", 'append'),
      ]);
      expect(warnings).toEqual([]);
    });
  });

  describe('rule 3: public pages load the SDK from the sdk script URL and initialise it after it loaded', () => {
    const page = (body: string) => `<!doctype html>\n<html><body>\n${body}\n</body></html>\n`;
    const tag = () => `<script src="${sdk()}"></script>`;
    const init = "Parse.initialize('id', 'js'); Parse.serverURL = 'http://localhost:4000/data';";

    it('no warning for a page that loads the SDK and initialises in a load handler, or right after the tag', async () => {
      const { warnings } = await deployOk(app.appId, [
        write('public/ok/a.html', page(`${tag()}\n<script>window.addEventListener('load', () => { ${init} });</script>`)),
        write('public/ok/b.html', page(`${tag()}\n<script>${init}\nnew Parse.Query('X').find();</script>`)),
        write('public/ok/c.html', page(`<script>window.onload = function () { ${init} };</script>\n${tag()}`)),
        write('public/ok/plain.html', page('<p>No SDK here.</p><script>console.log("hi")</script>')),
      ]);
      expect(warnings).toEqual([]);
    });

    it('warns about a page that uses Parse without loading the SDK (or loading it from elsewhere)', async () => {
      const { warnings } = await deployOk(app.appId, [
        write('public/bad/none.html', page(`<script>window.addEventListener('load', () => { ${init} });</script>`)),
        write('public/bad/cdn.html', page(`<script src="https://unpkg.com/parse/dist/parse.min.js"></script>\n<script>${init}</script>`)),
      ]);
      expect(warnings).toEqual([
        `public/bad/cdn.html uses Parse but does not load the data SDK from ${sdk()}. Add ${tag()} before the scripts that use Parse.`,
        `public/bad/none.html uses Parse but does not load the data SDK from ${sdk()}. Add ${tag()} before the scripts that use Parse.`,
      ]);
    });

    it('warns about a page that initialises before the SDK script has loaded', async () => {
      const { warnings } = await deployOk(app.appId, [
        write('public/early/before.html', page(`<script>${init}</script>\n${tag()}`)),
        write('public/early/async.html', page(`<script async src="${sdk()}"></script>\n<script>${init}</script>`)),
      ]);
      expect(warnings).toEqual([
        expect.stringMatching(/^public\/early\/async\.html calls Parse\.initialize before the data SDK has loaded\./),
        expect.stringMatching(/^public\/early\/before\.html calls Parse\.initialize before the data SDK has loaded\./),
      ]);
    });

    it('checks a public script through the pages that load it', async () => {
      const script = `${init}\nnew Parse.Query('ToDo').find();\n`;
      // Loaded after the SDK by a page: fine.
      expect(
        (await deployOk(app.appId, [write('public/js1/app.js', script), write('public/js1/index.html', page(`${tag()}\n<script src="app.js"></script>`))])).warnings,
      ).toEqual([]);
      // Loaded by no page that also loads the SDK.
      expect((await deployOk(app.appId, [write('public/js2/app.js', script), write('public/js2/index.html', page('<script src="/js2/app.js"></script>'))])).warnings).toEqual([
        `public/js2/app.js uses Parse, but no HTML page in public/ loads both the data SDK (${sdk()}) and this script. Add ${tag()} followed by <script src="/js2/app.js"></script> to the page that uses it.`,
      ]);
      // Loaded before the SDK, initialising at once.
      expect(
        (await deployOk(app.appId, [write('public/js3/app.js', script), write('public/js3/index.html', page(`<script src="./app.js"></script>\n${tag()}`))])).warnings,
      ).toEqual([expect.stringMatching(/^public\/js3\/app\.js calls Parse\.initialize before the data SDK has loaded\./)]);
      // ... unless it initialises in a load handler.
      expect(
        (await deployOk(app.appId, [write('public/js3/app.js', `window.addEventListener('load', function () { ${script} });`)])).warnings,
      ).toEqual([]);
    });
  });

  describe('syntax errors in cloud files', () => {
    it('reports file, line and column, keeps the files and does not reload', async () => {
      const other = await createApp();
      await deployOk(other.appId, [write('cloud/main.js', "Parse.Cloud.define('version', () => 1);\n")]);
      const reload = vi.spyOn(server.platform.services.cloud, 'reload');
      const broken = "Parse.Cloud.define('version', () => 2);\nconst = 3;\n";
      const result = await deployOk(other.appId, [write('cloud/main.js', broken)]);
      expect(result.warnings).toEqual([
        'cloud/main.js has a syntax error at line 2, column 7: Unexpected token. The files were saved, but the cloud code was not reloaded, so the previous version keeps running until you fix this file and deploy again.',
      ]);
      expect(result.message).toContain('The cloud code was not reloaded because of a syntax error (see warnings); the previous version keeps running.');
      expect(disk(other.appId, 'cloud/main.js')).toBe(broken);
      expect(reload).not.toHaveBeenCalled();
      // The previous code still runs.
      const call = await api(server, 'POST', `/backend-apps/${other.appId}/call-backend-api`, {
        token: server.alice,
        body: { requests: [{ method: 'POST', url: '/functions/version', body: {} }] },
      });
      expect((call.json() as { responses: unknown[] }).responses[0]).toEqual({ code: 200, body: { result: 1 } });
      // An error in a required file is reported too; a public-only deploy does not reload either.
      const fixed = await deployOk(other.appId, [
        write('cloud/main.js', "require('./lib/x.js');\nParse.Cloud.define('version', () => 3);\n"),
        write('cloud/lib/x.js', 'function (\n'),
      ]);
      expect(fixed.warnings).toEqual([expect.stringMatching(/^cloud\/lib\/x\.js has a syntax error at line 1, column 10: Unexpected token\./)]);
      expect(reload).not.toHaveBeenCalled();
      const ok = await deployOk(other.appId, [write('cloud/lib/x.js', 'module.exports = 1;\n')]);
      expect(ok.warnings).toEqual([]);
      expect(reload).toHaveBeenCalledTimes(1);
      expect(reload).toHaveBeenCalledWith(other.appId);
    });

    it('accepts module syntax and the newest syntax', async () => {
      const { warnings } = await deployOk(app.appId, [
        write('cloud/modern.mjs', "import x from './y.mjs';\nexport const z = x?.a ?? 1;\n"),
        write('cloud/newest.js', 'class A { static #n = 1; static n() { return A.#n; } }\nconst big = 10n ** 3n;\n'),
        write('cloud/main.js', "\nrequire('./newest.js');\nimport('./modern.mjs');\n", 'append'),
      ]);
      expect(warnings).toEqual([]);
    });

    it('a reload that fails does not fail the deploy: it becomes a warning', async () => {
      vi.spyOn(server.platform.services.cloud, 'reload').mockRejectedValueOnce(new Error('worker refused to start'));
      const result = await deployOk(app.appId, [write('cloud/main.js', '\n', 'append')]);
      expect(result.warnings).toEqual(['The files were saved, but the cloud code could not be reloaded: worker refused to start']);
    });
  });
});

describe('getCloudCode', () => {
  let app: App;
  let main: string;
  beforeAll(async () => {
    app = await createApp();
    main = disk(app.appId, 'cloud/main.js');
    await deployOk(app.appId, [
      write('cloud/todo/functions/a.js', "Parse.Cloud.define('a', () => 1);"),
      write('cloud/todo/jobs/b.js', "Parse.Cloud.job('b', () => 2);\n"),
      write('cloud/main.js', "require('./todo/functions/a.js');\nrequire('./todo/jobs/b.js');\n", 'append'),
      write('public/empty-dir/.keep', ''),
      del('public/empty-dir/.keep'),
    ]);
  });

  it('a file answers its content as text/plain, with recursive ignored', async () => {
    expect(await readOk(app.appId, { path: 'cloud/todo/jobs/b.js' })).toBe("Parse.Cloud.job('b', () => 2);\n");
    expect(await readOk(app.appId, { path: 'cloud/todo/jobs/b.js', recursive: false })).toBe("Parse.Cloud.job('b', () => 2);\n");
  });

  it('a folder answers a recursive listing by default: each file a header with path and size, then its content', async () => {
    const fullMain = disk(app.appId, 'cloud/main.js');
    const a = "Parse.Cloud.define('a', () => 1);";
    const b = "Parse.Cloud.job('b', () => 2);\n";
    const expected = `=== cloud/main.js (${Buffer.byteLength(fullMain)} bytes) ===\n${fullMain}=== cloud/todo/functions/a.js (${a.length} bytes) ===\n${a}\n=== cloud/todo/jobs/b.js (${b.length} bytes) ===\n${b}`;
    expect(await readOk(app.appId, { path: 'cloud' })).toBe(expected);
    expect(await readOk(app.appId, { path: 'cloud/', recursive: true })).toBe(expected);
    expect(fullMain.startsWith(main)).toBe(true);
    // The whole tree: both roots; the empty folder shows as its path.
    const all = await readOk(app.appId);
    expect(all.startsWith(expected)).toBe(true);
    expect(all).toContain('public/empty-dir/\n');
    expect(all).toMatch(/=== public\/index\.html \(\d+ bytes\) ===\n<!doctype html>/);
  });

  it('recursive false lists the folder\'s files and its sub-folders as path/', async () => {
    const fullMain = disk(app.appId, 'cloud/main.js');
    expect(await readOk(app.appId, { path: 'cloud', recursive: false })).toBe(`=== cloud/main.js (${Buffer.byteLength(fullMain)} bytes) ===\n${fullMain}cloud/todo/\n`);
    expect(await readOk(app.appId, { path: 'cloud/todo', recursive: false })).toBe('cloud/todo/functions/\ncloud/todo/jobs/\n');
    expect(await readOk(app.appId, { recursive: false })).toBe('cloud/\npublic/\n');
  });

  it('a binary file shows as (binary, N bytes)', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe]);
    fs.writeFileSync(fileOf(app.appId, 'public/logo.png'), bytes);
    expect(await readOk(app.appId, { path: 'public/logo.png' })).toBe('(binary, 7 bytes)');
    expect(await readOk(app.appId, { path: 'public' })).toContain('=== public/logo.png (binary, 7 bytes) ===\n');
  });

  it('an unknown path is a 404; an app with no tree yet lists as empty', async () => {
    expectError(await read(app.appId, { path: 'cloud/nope.js' }), 404, /Nothing exists at cloud\/nope\.js/);
    expectError(await read(app.appId, { path: 'public/empty-dir/x' }), 404, /Nothing exists/);
    fs.rmSync(treeOf(app.appId), { recursive: true });
    expect(await readOk(app.appId)).toBe('(the cloud code tree is empty)\n');
    expect(await readOk(app.appId, { path: 'public' })).toBe('(public/ is empty)\n');
    // ... and a deploy makes it again.
    await deployOk(app.appId, [write('public/index.html', '<p>back</p>')]);
    expect(await readOk(app.appId, { path: 'public/index.html' })).toBe('<p>back</p>');
  });

  it('does not follow a symbolic link out of the tree', async () => {
    fs.symlinkSync('/etc', fileOf(app.appId, 'public/etc'));
    expectError(await read(app.appId, { path: 'public/etc/hostname' }), 404, /Nothing exists/);
    expect(await readOk(app.appId, { path: 'public' })).not.toContain('etc');
  });
});

describe('unknown and foreign apps', () => {
  it('answer 404 for deploy and read, the same for another account\'s app', async () => {
    const bobs = await createApp(server.bob);
    const before = snapshot(bobs.appId);
    for (const appId of ['no-such-app', bobs.appId]) {
      const text = `No Backend App with appId "${appId}" exists in this account. List your apps with getBackendApps.`;
      const d = await deploy(appId, [write('public/x.txt', 'x')]);
      expectError(d, 404, /No Backend App/);
      expect(d.text).toBe(text);
      const r = await read(appId);
      expectError(r, 404, /No Backend App/);
      expect(r.text).toBe(text);
    }
    expect(snapshot(bobs.appId)).toEqual(before);
    // Bob sees his own tree.
    expect((await read(bobs.appId, {}, server.bob)).status).toBe(200);
  });
});

describe('through MCP', () => {
  it('deploys and reads with tools, and reports a forbidden path as an error result', async () => {
    const app = await createApp();
    const client = await modernHttpClient(server.url, server.alice);
    try {
      const deployed = await client.callTool({
        name: 'deployCloudCode',
        arguments: {
          appId: app.appId,
          changes: [
            { path: 'cloud/mcp/functions/ping.js', operation: 'write', writeMode: 'overwrite', data: "Parse.Cloud.define('ping', () => 'pong');\n" },
            { path: 'public/mcp/page.html', operation: 'write', writeMode: 'overwrite', data: '<script>Parse.initialize("a", "b");</script>' },
          ],
        },
      });
      expect(deployed.isError ?? false).toBe(false);
      const content = deployed.structuredContent as { message: string; warnings: string[] };
      expect(content.message).toContain('wrote cloud/mcp/functions/ping.js (overwrite, 42 bytes, new file)');
      expect(content.warnings).toEqual([
        expect.stringMatching(/^cloud\/mcp\/functions\/ping\.js is new, but cloud\/main\.js does not require it/),
        expect.stringMatching(/^public\/mcp\/page\.html uses Parse but does not load the data SDK/),
      ]);

      // The file itself as text content, not JSON-escaped inside an object.
      const file = await client.callTool({ name: 'getCloudCode', arguments: { appId: app.appId, path: 'cloud/mcp/functions/ping.js' } });
      expect(file.structuredContent).toBeUndefined();
      expect(file.content).toEqual([{ type: 'text', text: "Parse.Cloud.define('ping', () => 'pong');\n" }]);
      const folder = await client.callTool({ name: 'getCloudCode', arguments: { appId: app.appId, path: 'cloud/mcp', recursive: false } });
      expect(folder.content).toEqual([{ type: 'text', text: 'cloud/mcp/functions/\n' }]);

      const refused = await client.callTool({
        name: 'deployCloudCode',
        arguments: { appId: app.appId, changes: [{ path: 'etc/passwd', operation: 'delete' }] },
      });
      expect(refused.isError).toBe(true);
      expect((refused.content as Array<{ text: string }>)[0]!.text).toMatch(/outside the cloud code tree/);
      const missing = await client.callTool({ name: 'getCloudCode', arguments: { appId: app.appId, path: 'public/nope' } });
      expect(missing.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

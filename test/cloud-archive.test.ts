/**
 * The archive of a cloud code version (archive.ts): any tree packs and unpacks to the same files,
 * packs to the same bytes each time, and what is not such an archive is refused; the summary of a
 * deploy's changes stays short (versions.ts).
 */
import zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packTree, unpackTree } from '../src/platform/backendapps/cloudCode/archive.js';
import { summarise } from '../src/platform/backendapps/cloudCode/versions.js';

const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._ -]{0,40}$/).filter((s) => s !== '.' && s !== '..' && s !== 'node_modules');
// Long names too: tar's 100-byte name field is not a limit (tar-stream writes the ustar prefix or a pax header).
const treePath = fc.tuple(fc.constantFrom('cloud', 'public'), fc.array(segment, { minLength: 1, maxLength: 6 })).map(([root, parts]) => [root, ...parts].join('/'));
const tree = fc.dictionary(treePath, fc.uint8Array({ maxLength: 2000 }), { maxKeys: 12 }).map(
  (files) => new Map(Object.entries(files).map(([p, bytes]) => [p, Buffer.from(bytes)])),
);

describe('packTree and unpackTree', () => {
  it('unpack(pack(files)) is files, and packing is deterministic', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (files) => {
        const archive = await packTree(files);
        expect(await unpackTree(archive)).toEqual(files);
        expect((await packTree(new Map([...files].reverse()))).equals(archive)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses bytes that are not a gzipped tar of tree files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 300 }), async (bytes) => {
        await expect(unpackTree(Buffer.from(bytes))).rejects.toThrow();
      }),
      { numRuns: 60 },
    );
    const outside = await packTree(new Map([['etc/passwd', Buffer.from('x')]]));
    await expect(unpackTree(outside)).rejects.toThrow(/damaged: entry "etc\/passwd" is outside the cloud code tree/);
    await expect(unpackTree(zlib.gzipSync(Buffer.alloc(0)))).resolves.toEqual(new Map());
  });
});

describe('summarise', () => {
  it('joins short lists whole and cuts long ones to at most 500 characters, naming how many more', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 120 }), { maxLength: 300 }), (lines) => {
        const text = summarise(lines);
        expect(text.length).toBeLessThanOrEqual(500);
        if (lines.join('; ').length <= 500) expect(text).toBe(lines.join('; '));
        else expect(text).toMatch(/… and \d+ more$/);
      }),
    );
  });
});

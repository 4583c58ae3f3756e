import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMap, MultipartError, parseMap, readGraphQLMultipart, type MultipartFile } from '../src/data/rest/multipart.js';

// The GraphQL multipart reader (src/data/rest/multipart.ts): `map` paths placed into `operations`
// as properties, and whole bodies built by the platform's own FormData encoder (what browsers and
// apollo-upload-client send) read back.

/** JSON values with null leaves where files go. */
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.stringMatching(/^[a-z_][a-z0-9_]{0,5}$/), tie('value'), { maxKeys: 4, noNullPrototype: true }),
})).object as fc.Arbitrary<Record<string, unknown>>;

/** Every path (dot-joined) to a null in a JSON value. */
function nullPaths(value: unknown, prefix: string[] = []): string[] {
  if (value === null) return prefix.length ? [prefix.join('.')] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, [...prefix, String(i)]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => nullPaths(v, [...prefix, k]));
  return [];
}

/** The value at a dot path, as a reader of the filled operations finds it. */
const at = (value: unknown, path: string) => path.split('.').reduce<any>((v, k) => v?.[k], value);

const marker = (key: string) => ({ upload: key });

describe('applyMap', () => {
  it('puts each part at every null place the map names, and changes nothing else', () => {
    fc.assert(
      fc.property(
        json.filter((o) => nullPaths(o).length > 0),
        fc.integer({ min: 1, max: 3 }),
        fc.infiniteStream(fc.nat()),
        (operations, parts, picks) => {
          const places = nullPaths(operations);
          const it = picks[Symbol.iterator]();
          const map: Record<string, string[]> = {};
          places.forEach((p) => {
            const key = String(it.next().value % parts);
            (map[key] ??= []).push(p);
          });
          const before = structuredClone(operations);
          applyMap(operations, map, marker);
          for (const [key, paths] of Object.entries(map)) for (const p of paths) expect(at(operations, p)).toEqual(marker(key));
          // Put the nulls back: the rest is as it was.
          for (const paths of Object.values(map)) for (const p of paths) {
            const segments = p.split('.');
            const parent = segments.length > 1 ? at(operations, segments.slice(0, -1).join('.')) : operations;
            parent[segments.at(-1)!] = null;
          }
          expect(operations).toEqual(before);
        },
      ),
    );
  });

  it('refuses a path through what is not there, or to a place that holds a value, and then sets nothing', () => {
    fc.assert(
      fc.property(json, fc.array(fc.stringMatching(/^[a-z0-9_]{1,4}$/), { minLength: 1, maxLength: 4 }), (operations, segments) => {
        const path = segments.join('.');
        let parent: unknown = operations;
        let reachable = true;
        for (const s of segments.slice(0, -1)) {
          if (parent && typeof parent === 'object' && Object.hasOwn(parent, s) && (Array.isArray(parent) ? /^(0|[1-9][0-9]*)$/.test(s) : true)) parent = (parent as any)[s];
          else reachable = false;
        }
        const last = segments.at(-1)!;
        const fits =
          reachable &&
          parent !== null &&
          typeof parent === 'object' &&
          (Array.isArray(parent) ? /^(0|[1-9][0-9]*)$/.test(last) && Number(last) < parent.length && parent[Number(last)] === null : (parent as any)[last] === null || !Object.hasOwn(parent, last));
        const before = structuredClone(operations);
        // A second entry that would fit elsewhere: it must not be set when the first is refused. (Two
        // entries naming one place both fit, and the later one is set, as graphql-upload sets them.)
        const good = nullPaths(operations).find((p) => p !== path);
        const map = good ? { a: [path], b: [good] } : { a: [path] };
        if (fits) {
          expect(() => applyMap(operations, map, marker)).not.toThrow();
          expect(at(operations, path)).toEqual(marker('a'));
        } else {
          expect(() => applyMap(operations, map, marker)).toThrow(MultipartError);
          expect(operations).toEqual(before);
        }
      }),
    );
  });

  it('never reaches a prototype, whatever the path', () => {
    fc.assert(
      fc.property(
        json,
        fc.array(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '0', 'length'), fc.string({ maxLength: 4 })), { minLength: 1, maxLength: 4 }),
        (operations, segments) => {
          try {
            applyMap(operations, { a: [segments.join('.')] }, marker);
          } catch (error) {
            expect(error).toBeInstanceOf(MultipartError);
            expect((error as MultipartError).status).toBe(400);
          }
          expect(Object.prototype).not.toHaveProperty('upload');
          expect(({} as any).upload).toBeUndefined();
          expect(Object.getPrototypeOf(operations)).toBe(Object.prototype);
        },
      ),
    );
  });
});

describe('parseMap', () => {
  it('takes an object of arrays of strings, and names the entry that is not', () => {
    expect(parseMap('{"1":["variables.file"],"2":[]}')).toEqual({ 1: ['variables.file'], 2: [] });
    expect(() => parseMap('[1')).toThrow(/Invalid JSON in the ‘map’/);
    expect(() => parseMap('["variables.file"]')).toThrow(/Invalid type for the ‘map’ multipart field/);
    expect(() => parseMap('{"1":"variables.file"}')).toThrow(/entry key ‘1’/);
    expect(() => parseMap('{"1":["a", 2]}')).toThrow(/entry key ‘1’ array index ‘1’/);
  });

  it('never throws anything but a MultipartError 400', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
        try {
          const map = parseMap(text);
          for (const paths of Object.values(map)) for (const p of paths) expect(typeof p).toBe('string');
        } catch (error) {
          expect(error).toBeInstanceOf(MultipartError);
          expect((error as MultipartError).status).toBe(400);
        }
      }),
    );
  });
});

/** A multipart body as the platform's FormData encoder writes it: its bytes and content type. */
async function encode(parts: ({ field: string; value: string } | { field: string; file: { name: string; type: string; content: string | Uint8Array } })[]) {
  const form = new FormData();
  for (const part of parts) {
    if ('file' in part) form.append(part.field, new Blob([part.file.content], { type: part.file.type }), part.file.name);
    else form.append(part.field, part.value);
  }
  const request = new Request('http://localhost/graphql', { method: 'POST', body: form });
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}

const read = async (parts: Parameters<typeof encode>[0]) => {
  const { body, contentType } = await encode(parts);
  return readGraphQLMultipart(body, contentType, (file: MultipartFile) => file);
};

const refusal = async (parts: Parameters<typeof encode>[0]) => {
  try {
    await read(parts);
  } catch (error) {
    expect(error).toBeInstanceOf(MultipartError);
    return { status: (error as MultipartError).status, message: (error as MultipartError).message };
  }
  throw new Error('expected a refusal');
};

const operations = JSON.stringify({ query: 'mutation ($f: Upload!) { createFile(input: { upload: $f }) { fileInfo { name } } }', variables: { f: null, list: [null, null] } });

describe('readGraphQLMultipart', () => {
  it('reads operations, map and files, one value per part however many places it fills', async () => {
    const bytes = new Uint8Array([0, 1, 2, 255, 13, 10, 45, 45]);
    const out: any = await read([
      { field: 'operations', value: operations },
      { field: 'map', value: JSON.stringify({ a: ['variables.f', 'variables.list.1'], b: ['variables.list.0'] }) },
      { field: 'a', file: { name: 'one.bin', type: 'application/octet-stream', content: bytes } },
      { field: 'b', file: { name: 'two.txt', type: 'text/plain', content: 'two' } },
      { field: 'extra', file: { name: 'skipped.txt', type: 'text/plain', content: 'not mapped' } },
    ]);
    expect(out.variables.f).toMatchObject({ field: 'a', filename: 'one.bin', mimetype: 'application/octet-stream' });
    expect(Buffer.from(out.variables.f.data)).toEqual(Buffer.from(bytes));
    expect(out.variables.list[1]).toBe(out.variables.f);
    expect(out.variables.list[0]).toMatchObject({ filename: 'two.txt', mimetype: 'text/plain' });
    expect(out.variables.list[0].data.toString()).toBe('two');
    expect(out.query).toContain('createFile');
  });

  it('refuses what the spec does not allow with a 400 that says what was wrong', async () => {
    const file = { field: '1', file: { name: 'a.txt', type: 'text/plain', content: 'a' } };
    expect(await refusal([{ field: 'map', value: '{}' }, file])).toMatchObject({ status: 400, message: expect.stringMatching(/‘map’ should follow ‘operations’/) });
    expect(await refusal([{ field: 'other', value: 'x' }])).toMatchObject({ status: 400, message: expect.stringMatching(/Missing multipart field ‘operations’/) });
    expect(await refusal([{ field: 'operations', value: operations }])).toMatchObject({ status: 400, message: expect.stringMatching(/Missing multipart field ‘map’/) });
    expect(await refusal([{ field: 'operations', value: '{' }])).toMatchObject({ status: 400, message: expect.stringMatching(/Invalid JSON in the ‘operations’/) });
    expect(await refusal([{ field: 'operations', value: '[{}]' }])).toMatchObject({ status: 400, message: expect.stringMatching(/batched operations/) });
    expect(await refusal([{ field: 'operations', value: operations }, file, { field: 'map', value: '{"1":["variables.f"]}' }])).toMatchObject({
      status: 400,
      message: expect.stringMatching(/files should follow ‘map’/),
    });
    expect(await refusal([{ field: 'operations', value: operations }, { field: 'map', value: '{"1":["variables.nothere.f"]}' }, file])).toMatchObject({
      status: 400,
      message: expect.stringMatching(/entry key ‘1’ array index ‘0’ value ‘variables.nothere.f’/),
    });
    expect(await refusal([{ field: 'operations', value: operations }, { field: 'map', value: '{"1":["variables.f"],"2":["variables.list.0"]}' }, file])).toMatchObject({
      status: 400,
      message: expect.stringMatching(/File missing in the request: .*part ‘2’/),
    });
    expect(await refusal([{ field: 'operations', value: 'x'.repeat(1_000_001) }])).toMatchObject({ status: 413, message: expect.stringMatching(/exceeds the 1000000 byte size limit/) });
    await expect(readGraphQLMultipart(Buffer.from('x'), 'multipart/form-data', (f) => f)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/Invalid multipart body/) });
    await expect(readGraphQLMultipart(Buffer.from('--b\r\nbroken'), 'multipart/form-data; boundary=b', (f) => f)).rejects.toMatchObject({ status: 400 });
  });

  it('answers every body, never with anything but its result or a MultipartError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.constantFrom('multipart/form-data; boundary=b', 'multipart/form-data; boundary=----x', 'multipart/form-data'), async (bytes, type) => {
        try {
          const out = await readGraphQLMultipart(Buffer.concat([Buffer.from('--b\r\n'), Buffer.from(bytes)]), type, (f) => f);
          expect(typeof out).toBe('object');
        } catch (error) {
          expect(error).toBeInstanceOf(MultipartError);
        }
      }),
      { numRuns: 200 },
    );
  });
});

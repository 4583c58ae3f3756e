/**
 * The answer of a find sent as JSON text (src/data/rest/types.ts `jsonText`): what it answers, and
 * that it is an object with fast properties sharing one hidden class, as V8's own checks tell
 * (`%HasFastProperties`, `%HaveSameMap`, in a child process started with --allow-natives-syntax).
 * The object literal with getters it replaced was in dictionary mode, and its answers' texts
 * outlived the scavenges until the next full GC (types.ts says how that was measured).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jsonText } from '../src/data/rest/types.js';

const exec = promisify(execFile);

describe('jsonText', () => {
  it('answers the text as json until body is read, then the parsed body only', () => {
    const answer = jsonText('{"results":[{"objectId":"a"}]}');
    expect(answer.status).toBe(200);
    expect(answer.json).toBe('{"results":[{"objectId":"a"}]}');
    const body = answer.body as { results: Array<Record<string, unknown>> };
    expect(body).toEqual({ results: [{ objectId: 'a' }] });
    // A reader may change the body (the push audiences' route does): from now on the body is what is sent.
    body.results[0]!.query = {};
    expect(answer.json).toBeUndefined();
    expect(answer.body).toBe(body);
  });

  it('gives every answer fast properties and the same hidden class in V8', async () => {
    const module = pathToFileURL(path.resolve('dist/src/data/rest/types.js')).href;
    const code = `
      import(${JSON.stringify(module)}).then(({ jsonText }) => {
        const a = jsonText('{"results":[]}');
        const b = jsonText('{"results":[1]}');
        void a.json, b.body;
        process.stdout.write(JSON.stringify([%HasFastProperties(a), %HasFastProperties(b), %HaveSameMap(a, b)]));
      });`;
    const { stdout } = await exec(process.execPath, ['--allow-natives-syntax', '-e', code]);
    expect(JSON.parse(stdout)).toEqual([true, true, true]);
  });
});

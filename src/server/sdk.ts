import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);

/**
 * `GET /sdk/parse.min.js`: the browser build of the Parse JavaScript SDK from the `parse` package
 * (`{sdk_script_url}` of the spec, rule 3 of deployCloudCode), so hosted pages load it from here
 * with no CDN. Read once; cached by browsers for an hour.
 */
export function sdkScript() {
  const file = require.resolve('parse/dist/parse.min.js');
  let body: Buffer | undefined;
  return async (app: FastifyInstance) => {
    app.get('/sdk/parse.min.js', async (_request, reply) => {
      body ??= fs.readFileSync(file);
      return reply
        .header('cache-control', 'public, max-age=3600')
        .header('access-control-allow-origin', '*')
        .type('application/javascript; charset=utf-8')
        .send(body);
    });
  };
}

import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { isPlainObject } from '../../data/values.js';
import { appCrumbs, appHeading, appHref, dataCall } from './appframe.js';
import { assetUrl } from './assets.js';
import { ownApp, sendPage, sessionOf, type Dashboard } from './context.js';
import { html } from './html.js';

type AppParams = { Params: { appId: string } };

/** The query the page opens with: it answers on any app. */
const FIRST_QUERY = '# Parse\'s GraphQL API of this app, run with the master key.\n{\n  health\n}\n';

const require = createRequire(import.meta.url);

/**
 * The browser files of GraphiQL 2 (its UMD build) and the React 16 it runs on, as the npm packages ship
 * them; read once, on first request.
 */
const VENDOR: Record<string, { module: string; type: string }> = {
  'react.js': { module: 'react/umd/react.production.min.js', type: 'text/javascript; charset=utf-8' },
  'react-dom.js': { module: 'react-dom/umd/react-dom.production.min.js', type: 'text/javascript; charset=utf-8' },
  'graphiql.js': { module: 'graphiql/graphiql.min.js', type: 'text/javascript; charset=utf-8' },
  'graphiql.css': { module: 'graphiql/graphiql.min.css', type: 'text/css; charset=utf-8' },
};
const vendorFiles = new Map<string, Buffer>();
const vendorUrl = (name: string) => `/dashboard/graphiql/${name}?v=${require(`${VENDOR[name]!.module.split('/')[0]}/package.json`).version as string}`;

/**
 * The GraphQL page of a Backend App: GraphiQL on the app's GraphQL API (src/data/graphql), for the
 * signed-in owner. The page posts each document to `POST /dashboard/apps/<appId>/graphql` (the
 * session's cookie, its CSRF token in `x-csrf-token`, same origin: index.ts checks all three), which
 * runs it as `callBackendAPI` does, with the master key on the server; the key is never sent to the
 * browser.
 */
export function graphQLRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<{ Params: { name: string } }>('/graphiql/:name', { config: { dashboardPublic: true } }, (request, reply) => {
    const file = VENDOR[request.params.name];
    if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('No such file.');
    let body = vendorFiles.get(request.params.name);
    if (!body) {
      body = fs.readFileSync(require.resolve(file.module));
      vendorFiles.set(request.params.name, body);
    }
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(file.type).send(body);
  });

  app.get<AppParams>('/apps/:appId/graphql', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const session = sessionOf(request);
    // GraphiQL's bundle evaluates a string once (its bundler's way to find the global object) and
    // ships its fonts as data: URLs; this page alone allows both. Its only inputs are the app's name
    // and id, escaped as everywhere (html.ts).
    const policy = String(reply.getHeader('content-security-policy') ?? '');
    reply.header('content-security-policy', `${policy.replace("script-src 'self'", "script-src 'self' 'unsafe-eval'")}; font-src data:`);
    return sendPage(reply, 200, {
      title: `GraphQL · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'GraphQL' }),
      heading: appHeading(backendApp, 'graphql'),
      body: html`<p>Parse's GraphQL API of this app, generated from its classes, at <code>${d.services.urls.graphql}</code> (with the app's
<code>X-Parse-Application-Id</code> and a key, as REST). Here documents run with the <strong>master key</strong>, on the server: permissions and ACLs do not apply.</p>
<link rel="stylesheet" href="${vendorUrl('graphiql.css')}">
<div id="graphiql" class="graphiql" data-endpoint="${appHref(backendApp.appId, 'graphql')}" data-csrf="${session.csrfToken}" data-query="${FIRST_QUERY}"><p class="muted">GraphiQL starts here once its script has loaded.</p></div>
<script src="${vendorUrl('react.js')}"></script>
<script src="${vendorUrl('react-dom.js')}"></script>
<script src="${vendorUrl('graphiql.js')}"></script>
<script src="${assetUrl('graphiql-start.js')}"></script>`,
    });
  });

  app.post<AppParams>('/apps/:appId/graphql', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    if (!isPlainObject(request.body) || typeof request.body.query !== 'string') {
      return reply.code(400).type('application/json').send({ errors: [{ message: 'Send a JSON object with `query` (and optionally `variables` and `operationName`).', extensions: { code: 'BAD_REQUEST' } }] });
    }
    const answer = await dataCall(d, backendApp.appId, 'POST', '/graphql', request.body);
    return reply.code(answer.code).type('application/json').send(answer.body);
  });
}

import type { FastifyInstance } from 'fastify';
import type { Platform } from '../platform/platform.js';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Backyard</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
code{background:#f1f1f1;padding:.1em .3em;border-radius:3px}dt{font-weight:600;margin-top:.6rem}</style>
</head><body>${body}</body></html>`;

/**
 * The first, small form of the dashboard (issue 2: `dashboardURL` is a page that exists). It shows
 * only what is not secret (the application id and the public URLs); the full dashboard, with
 * sign-in, comes with its own issue.
 */
export function dashboard(platform: Platform) {
  const { services } = platform;
  return async (app: FastifyInstance) => {
    const html = (status: number, title: string, body: string) => (_: unknown, reply: import('fastify').FastifyReply) =>
      reply.code(status).type('text/html; charset=utf-8').send(page(title, body));

    app.get('/dashboard', (request, reply) =>
      html(200, 'Dashboard', `<h1>Backyard</h1><p>Open a Backend App from the <code>dashboardURL</code> your assistant gave you.</p>`)(request, reply),
    );
    app.get<{ Params: { appId: string } }>('/dashboard/apps/:appId', (request, reply) => {
      const keys = services.backendApps.keys(request.params.appId);
      if (!keys) return html(404, 'Not found', '<h1>No such Backend App</h1>')(request, reply);
      const appId = escapeHtml(keys.applicationId);
      return html(
        200,
        'Backend App',
        `<h1>Backend App</h1>
<dl><dt>Application id</dt><dd><code>${appId}</code></dd>
<dt>Data API (serverURL)</dt><dd><code>${escapeHtml(services.urls.dataApi)}</code></dd>
<dt>SDK script</dt><dd><code>${escapeHtml(services.urls.sdkScript)}</code></dd></dl>
<p>The keys, master key included, are printed on the machine running Backyard by <code>backyard app keys ${appId}</code>.</p>`,
      )(request, reply);
    });
  };
}

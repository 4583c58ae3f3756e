import type { FastifyInstance } from 'fastify';
import { WRITE_SCOPE } from '../../platform/oauth/scopes.js';
import { redirectTarget } from '../../platform/oauth/uris.js';
import { flashOf, redirectWith, sendNotFound, sendPage, sessionOf, type Dashboard } from './context.js';
import { html, path, when } from './html.js';
import { csrfField } from './layout.js';

/** The connected apps page. */
export const CONNECTIONS_PATH = '/dashboard/connections';

/**
 * Connected apps: the MCP clients the account approved through OAuth, with their
 * (untrusted, escaped) names, where they return to, their access and last use; disconnecting one
 * revokes its access and refresh tokens at once. Another account's connections answer 404.
 */
export function connectionRoutes(app: FastifyInstance, d: Dashboard): void {
  const oauth = d.services.oauth;

  app.get('/connections', async (request, reply) => {
    const session = sessionOf(request);
    const grants = await oauth.grantsOf(session.account.id);
    const rows = grants.map(
      (g) => html`<tr>
  <td><strong>${g.clientName || 'An app that gave no name'}</strong><div class="muted small"><code>${g.clientId}</code></div></td>
  <td><code>${redirectTarget(g.redirectUri)}</code></td>
  <td>${g.scopes.includes(WRITE_SCOPE) ? 'Full' : 'Read only'}</td>
  <td>${when(g.createdAt)}</td>
  <td>${g.lastUsedAt ? when(g.lastUsedAt) : html`<span class="muted">never</span>`}</td>
  <td><form method="post" action="${path`/dashboard/connections/${g.id}/revoke`}" class="inline" data-confirm="Disconnect ${g.clientName || 'this app'}? It loses access at once.">${csrfField(session)}<button type="submit" class="danger" aria-label="Disconnect ${g.clientName || g.clientId}">Disconnect</button></form></td>
</tr>`,
    );
    return sendPage(reply, 200, {
      title: 'Connected apps',
      session,
      crumbs: [{ label: 'Overview', href: '/dashboard' }, { label: 'Connected apps' }],
      heading: html`<h1>Connected apps</h1>`,
      body: html`${flashOf(d, request)}
<p>MCP clients you connected to Backyard by signing in and approving them. Scripts that use an account token are not listed here.</p>
${grants.length
  ? html`<div class="table-wrap"><table id="connections">
<thead><tr><th scope="col">App</th><th scope="col">Returns to</th><th scope="col">Access</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`
  : html`<p class="muted" id="no-connections">No app is connected.</p>`}`,
    });
  });

  app.post<{ Params: { id: string } }>('/connections/:id/revoke', async (request, reply) => {
    const session = sessionOf(request);
    if (!(await oauth.revokeGrant(session.account.id, request.params.id))) return sendNotFound(reply, session, 'connection');
    return redirectWith(d, reply, session, CONNECTIONS_PATH, { kind: 'ok', title: 'The app was disconnected: its tokens no longer work.', lines: [] });
  });
}

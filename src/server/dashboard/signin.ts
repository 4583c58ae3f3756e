import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Account } from '../../platform/accounts/service.js';
import { formOf, queryOf, redirect, safeNext, sendPage, sessionOf, type Dashboard } from './context.js';
import { html } from './html.js';
import { notice } from './layout.js';
import { SESSION_COOKIE, clearedSessionCookie, readCookie, sessionCookie } from './security.js';

/** Route options of pages that answer without a session (the guard still checks Origin on their posts). */
export const PUBLIC = { config: { dashboardPublic: true } } as const;

function signInPage(reply: FastifyReply, status: number, next: string, error?: string): FastifyReply {
  return sendPage(reply, status, {
    title: 'Sign in',
    body: html`<div class="signin">
<h1>Sign in to Backyard</h1>
${error ? notice('bad', error) : ''}
<div class="panel">
<form method="post" action="/dashboard/sign-in">
  <input type="hidden" name="next" value="${next}">
  <div class="field">
    <label for="token">Account token</label>
    <input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false" aria-describedby="token-hint" autofocus>
    <span class="hint" id="token-hint">The token printed by <code>backyard account create &lt;login&gt;</code> or <code>backyard account token &lt;login&gt;</code>.</span>
  </div>
  <button type="submit">Sign in</button>
</form>
</div>
<p class="hint">On the machine that runs Backyard, <code>backyard dashboard</code> prints a one-time sign-in link for the local account.</p>
</div>`,
  });
}

async function startSession(d: Dashboard, reply: FastifyReply, account: Account, next: string): Promise<FastifyReply> {
  const { token } = await d.sessions.create(account);
  reply.header('set-cookie', sessionCookie(token, d.services.urls.base));
  return redirect(reply, safeNext(next));
}

/**
 * Sign-in with an account token, one-time sign-in links (`backyard dashboard`), and sign-out.
 * Failed attempts answer the same text whatever was wrong.
 */
export function signInRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get('/sign-in', PUBLIC, async (request, reply) => {
    const next = safeNext(queryOf(request).next);
    // Already signed in: straight on.
    if (await d.sessions.find(readCookie(request, SESSION_COOKIE))) return redirect(reply, next);
    return signInPage(reply, 200, next);
  });

  app.post('/sign-in', PUBLIC, async (request, reply) => {
    const form = formOf(request);
    const next = safeNext(form.next);
    const account = typeof form.token === 'string' ? await d.sessions.authenticateToken(form.token) : undefined;
    if (!account) return signInPage(reply, 401, next, 'That token is not valid: it is unknown or was revoked.');
    return startSession(d, reply, account, next);
  });

  // The link only shows a button: following the link alone (a preview, a prefetch) signs nobody in.
  app.get('/sign-in/link', PUBLIC, async (request, reply) => {
    const code = queryOf(request).code;
    const account = await d.sessions.peekLinkCode(code);
    if (!account) {
      return signInPage(reply, 400, '/dashboard', 'This sign-in link is not valid: it was used already or it expired. Run backyard dashboard again for a new one.');
    }
    return sendPage(reply, 200, {
      title: 'Sign in',
      body: html`<div class="signin">
<h1>Sign in to Backyard</h1>
<div class="panel">
<p>This one-time link signs you in as <strong>${account.login}</strong>.</p>
<form method="post" action="/dashboard/sign-in/link">
  <input type="hidden" name="code" value="${code ?? ''}">
  <button type="submit">Continue as ${account.login}</button>
</form>
</div>
</div>`,
    });
  });

  app.post('/sign-in/link', PUBLIC, async (request, reply) => {
    const account = await d.sessions.redeemLinkCode(formOf(request).code);
    if (!account) {
      return signInPage(reply, 400, '/dashboard', 'This sign-in link is not valid: it was used already or it expired. Run backyard dashboard again for a new one.');
    }
    return startSession(d, reply, account, '/dashboard');
  });

  app.post('/sign-out', async (request, reply) => {
    await d.sessions.end(sessionOf(request).hash);
    reply.header('set-cookie', clearedSessionCookie());
    return redirect(reply, '/dashboard/sign-in');
  });
}

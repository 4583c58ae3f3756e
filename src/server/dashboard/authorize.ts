import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '@modelcontextprotocol/server';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import { READ_SCOPE, WRITE_SCOPE, scopesFor } from '../../platform/oauth/scopes.js';
import type { AuthorizationParams, AuthorizationRequest } from '../../platform/oauth/service.js';
import type { OAuthOperations } from '../../platform/services.js';
import { redirectTarget } from '../../platform/oauth/uris.js';
import { OAUTH_PATHS } from '../oauth/metadata.js';
import { formOf, sendPage, sessionOf, signInPath, type Dashboard } from './context.js';
import { html } from './html.js';
import { csrfField, notice } from './layout.js';
import { SESSION_COOKIE, readCookie } from './security.js';
import { PUBLIC } from './signin.js';

/** The parameters of an authorization request (OAuth 2.1 §4.1.1; RFC 8707), carried from the query to the consent form. */
const PARAMS = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'scope', 'resource'] as const;

/** The route under the dashboard's `/dashboard` prefix. */
const ROUTE = OAUTH_PATHS.authorize.slice('/dashboard'.length);

/** The request's parameters; `repeated` names one that came twice (OAuth 2.1 §3.1: refused). */
function paramsOf(source: Record<string, unknown>): { params: AuthorizationParams; repeated?: string } {
  const params: AuthorizationParams = {};
  for (const name of PARAMS) {
    const value = source[name];
    if (Array.isArray(value)) return { params, repeated: name };
    if (typeof value === 'string') params[name] = value;
  }
  return { params };
}

/** Sends the browser back to the client (OAuth 2.1 §4.1.2; RFC 9207: always with `iss`). */
function backToClient(reply: FastifyReply, oauth: OAuthOperations, redirectUri: string, values: Record<string, string | undefined>): FastifyReply {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(values)) if (value !== undefined) url.searchParams.set(key, value);
  url.searchParams.set('iss', oauth.issuer());
  return reply.code(303).header('location', url.href).send();
}

const errorBack = (reply: FastifyReply, oauth: OAuthOperations, redirectUri: string, state: string | undefined, error: OAuthError) =>
  backToClient(reply, oauth, redirectUri, { error: error.code, error_description: error.message, state });

/** A request that cannot go back to its client: said to the person, never redirected (OAuth 2.1 §4.1.2.1). */
function refusalPage(reply: FastifyReply, session: DashboardSession | undefined, error: OAuthError): FastifyReply {
  return sendPage(reply, 400, {
    title: 'Cannot connect this app',
    session,
    heading: html`<h1>This app cannot connect to Backyard</h1>`,
    body: html`${notice('bad', 'The app sent a request that Backyard refuses.', [error.message])}
<p>Nothing was shared with the app. Tell its makers what this page says, or try connecting again from the app.</p>
<p><a href="/dashboard">Open the dashboard</a></p>`,
  });
}

/**
 * The CSP source of where the consent form's answer redirects: its origin, or a native app's scheme.
 * Browsers apply the consent page's `form-action` to that redirect. Undefined for anything that
 * could change the policy's meaning.
 */
function formTarget(redirectUri: string): string | undefined {
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') return /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/.test(url.origin) ? url.origin : undefined;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}

function consentPage(reply: FastifyReply, session: DashboardSession, request: AuthorizationRequest, params: AuthorizationParams): FastifyReply {
  const { client } = request;
  const target = formTarget(request.redirectUri);
  const policy = String(reply.getHeader('content-security-policy') ?? '');
  if (target) reply.header('content-security-policy', policy.replace("form-action 'self'", `form-action 'self' ${target}`));
  const mayWrite = request.scopes.includes(WRITE_SCOPE);
  const name = client.clientName.trim() || 'An app that gave no name';
  return sendPage(reply, 200, {
    title: 'Connect an app',
    session,
    heading: html`<h1>Connect an app to Backyard?</h1>`,
    body: html`<div class="panel">
<p><strong id="client-name">${name}</strong> asks to use Backyard's tools as <strong>${session.account.login}</strong>.</p>
<dl class="facts">
  <dt>Name</dt><dd>${name} <span class="muted small">(as the app calls itself; Backyard did not check it)</span></dd>
  <dt>Returns to</dt><dd><code id="redirect-host">${redirectTarget(request.redirectUri)}</code></dd>
  <dt>Client id</dt><dd><code>${client.clientId}</code></dd>
</dl>
<p class="hint">Approve only if you started connecting this app just now and the address it returns to is the one you expect.</p>
<form method="post" action="${OAUTH_PATHS.authorize}">
  ${csrfField(session)}
  ${PARAMS.map((p) => (params[p] === undefined ? '' : html`<input type="hidden" name="${p}" value="${params[p]}">`))}
  <fieldset>
    <legend>Access</legend>
    <div><label><input type="radio" name="access" value="read" checked> Read only: it may read guides and look at your apps and environments (<code>${READ_SCOPE}</code>)</label></div>
    ${mayWrite
      ? html`<div><label><input type="radio" name="access" value="full"> Full: it may also create, change and delete apps, run commands and deploy (<code>${WRITE_SCOPE}</code>)</label></div>`
      : ''}
  </fieldset>
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
</div>
<p class="hint">You can disconnect it at any time under <a href="/dashboard/connections">Connected apps</a>.</p>`,
  });
}

/** A browser that came from another site carries no SameSite=Strict cookie: one same-site click brings it (signed in or not). */
function continuePage(reply: FastifyReply, url: string): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Connect an app',
    heading: html`<h1>Connect an app to Backyard</h1>`,
    body: html`<p>An app sent you here to connect to this Backyard.</p><p><a class="button" href="${url}">Continue</a></p>`,
  });
}

/**
 * The authorization endpoint (OAuth 2.1 §4.1; MCP "Authorization") as a dashboard page:
 * `GET /dashboard/oauth/authorize` sends a browser without a session to sign in first, carrying the
 * request, before looking at it (a client_id may be a URL that checking it fetches: nobody may make
 * Backyard fetch without signing in). Signed in, it checks the request: a client or redirect URI it
 * cannot trust is said on a 400 page, never redirected to (OAuth 2.1 §4.1.2.1); any later error goes
 * back to the redirect URI with `error`, `error_description`, `state` and `iss` (RFC 6749
 * §4.1.2.1, RFC 9207). Then it shows the consent page: the client's name and redirect host as
 * untrusted text, read-only or full access, approve or deny. `POST` (session and CSRF checked by the
 * dashboard) checks the request again and redirects to the client with a code, `access_denied`, or
 * the OAuth error of a grant that cannot be made.
 */
export function authorizeRoutes(app: FastifyInstance, d: Dashboard): void {
  const oauth = d.services.oauth;

  app.get(ROUTE, PUBLIC, async (request: FastifyRequest, reply) => {
    const session = await d.sessions.find(readCookie(request, SESSION_COOKIE));
    if (!session) {
      if (request.headers['sec-fetch-site'] === 'cross-site') return continuePage(reply, request.url);
      return reply.code(303).header('location', signInPath(request.url)).send();
    }
    const { params, repeated } = paramsOf(request.query as Record<string, unknown>);
    const check = await oauth.checkAuthorizationRequest(params);
    if (check.kind === 'show') return refusalPage(reply, session, check.error);
    if (check.kind === 'redirect') return errorBack(reply, oauth, check.redirectUri, check.state, check.error);
    if (repeated) {
      return backToClient(reply, oauth, check.request.redirectUri, { error: 'invalid_request', error_description: `The parameter ${repeated} is repeated.`, state: check.request.state });
    }
    return consentPage(reply, session, check.request, params);
  });

  app.post(ROUTE, async (request, reply) => {
    const session = sessionOf(request);
    const form = formOf(request);
    const { params } = paramsOf(form);
    const check = await oauth.checkAuthorizationRequest(params);
    if (check.kind === 'show') return refusalPage(reply, session, check.error);
    if (check.kind === 'redirect') return errorBack(reply, oauth, check.redirectUri, check.state, check.error);
    const { request: authorization } = check;
    if (form.decision !== 'approve') {
      return backToClient(reply, oauth, authorization.redirectUri, { error: 'access_denied', error_description: 'The person denied the request.', state: authorization.state });
    }
    let code: string;
    try {
      code = await oauth.issueCode(session.account, authorization, scopesFor(form.access === 'full' ? 'full' : 'read'));
    } catch (error) {
      // A grant that cannot be made (invalid_scope) is the client's answer, not a failure of the page.
      if (error instanceof OAuthError) return errorBack(reply, oauth, authorization.redirectUri, authorization.state, error);
      throw error;
    }
    return backToClient(reply, oauth, authorization.redirectUri, { code, state: authorization.state });
  });
}

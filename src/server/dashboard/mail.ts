import type { FastifyInstance } from 'fastify';
import type { MailRecord } from '../../data/mail/outbox.js';
import { appCrumbs, appHeading, appHref } from './appframe.js';
import { ownApp, sendPage, sessionOf, type Dashboard } from './context.js';
import { html } from './html.js';
import { badge } from './layout.js';

type AppParams = { Params: { appId: string } };

const statusBadge = (mail: MailRecord) =>
  mail.status === 'sent' ? badge('ok', 'sent') : mail.status === 'failed' ? badge('bad', 'failed') : badge('off', 'kept here');

/** The links of a mail's text, so that a person can open a verification or reset link from here. */
const linksOf = (text: string): string[] => [...new Set(text.match(/https?:\/\/[^\s<>"]+/g) ?? [])];

/**
 * The app's mail: the verification and password reset mails its users were
 * sent, newest first, with what became of each (sent through SMTP, failed and why, or kept here
 * because no SMTP server is configured) and their links, which a person can open from here.
 */
export function mailRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/apps/:appId/mail', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const mails = await d.services.dataApi.apps.mails(backendApp.appId);
    return sendPage(reply, 200, {
      title: `Mail · ${backendApp.appName}`,
      session,
      crumbs: appCrumbs(backendApp, { label: 'Mail' }),
      heading: appHeading(backendApp, 'mail'),
      body: html`<section aria-labelledby="mail-heading">
  <h2 id="mail-heading">Mails to the app's users</h2>
  <p class="hint">Email verification and password reset mails, newest first (the last 200 are kept). Without an SMTP server
    (the app's <code>emailAdapter</code> on its <a href="${appHref(backendApp.appId, 'settings')}">server settings</a>, or the server's <code>BACKYARD_SMTP_URL</code>)
    they are only kept here: open their links from this page. <a href="${appHref(backendApp.appId, 'mail')}">Refresh</a></p>
  ${mails.length
    ? html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">When</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Status</th><th scope="col">Links</th><th scope="col">Text</th></tr></thead>
    <tbody>${mails.map(
      (m) => html`<tr>
      <td><time datetime="${m.at}">${m.at.replace('T', ' ').slice(0, 19)}</time></td>
      <td>${m.to}</td>
      <td>${m.subject}</td>
      <td>${statusBadge(m)}${m.via ? html` <span class="muted small">via ${m.via}</span>` : ''}${m.error ? html`<div class="small">${m.error}</div>` : ''}</td>
      <td>${linksOf(m.text).map((link) => html`<a href="${link}" rel="noreferrer">${link.includes('request_password_reset') ? 'Choose a password' : link.includes('verify_email') ? 'Verify the email' : 'Open'}</a> `)}</td>
      <td><details><summary>Show</summary><pre>${m.text}</pre></details></td>
    </tr>`,
    )}</tbody></table></div>`
    : html`<p class="muted">No mail yet. Mails are sent when the app's <code>verifyUserEmails</code> is on and a user signs up, or when a user asks for a password reset.</p>`}
</section>`,
    });
  });
}

import { ParseError } from '../../errors.js';
import type { PublicRoute } from '../handler.js';
import type { DataResponse, RouteApps } from '../types.js';

/**
 * The pages a person opens from an app's mails (Parse Server's PublicAPIRouter: `verify_email` and
 * `request_password_reset` under `<server>/apps/<appId>/`), served without keys on the data API's
 * origin: no script, nothing loaded from elsewhere, not framed, and no Referer that would carry a
 * token on. A link's token is the only credential (users/emails.ts).
 */

const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

const PAGE = /^\/apps\/([^/]+)\/(verify_email|request_password_reset)$/;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A whole page: `body` is HTML whose variable parts the caller escaped. */
function page(status: number, title: string, body: string): DataResponse {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}.error{color:#b00020}</style>
</head><body><h1>${escape(title)}</h1>${body}</body></html>`;
  return { status, body: undefined, headers: PAGE_HEADERS, raw: { data: Buffer.from(html), contentType: 'text/html; charset=utf-8' } };
}

const invalidLink = (what: string) => page(404, 'Invalid link', `<p>This ${what} link is not valid: it was used already, it expired, or it was copied incompletely. Ask the app for a new one.</p>`);

/** The form that chooses a new password; posts back to the same address with the token. */
function chooseForm(appName: string, token: string, username: unknown, problem?: string): DataResponse {
  const who = typeof username === 'string' ? ` for <strong>${escape(username)}</strong>` : '';
  return page(
    problem ? 400 : 200,
    `Choose a new password`,
    `<p>Choose a new password${who} on ${escape(appName)}.</p>${problem ? `<p class="error" role="alert">${escape(problem)}</p>` : ''}
<form method="post" action="request_password_reset">
<input type="hidden" name="token" value="${escape(token)}">
<label for="new_password">New password</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" required>
<label for="confirm_password">The same password again</label><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" required>
<button type="submit">Set the password</button>
</form>`,
  );
}

/** The mail pages as a PublicRoute for paths under `/apps/`; other methods and paths are 404 pages. */
export function mailPages(apps: RouteApps): PublicRoute {
  const answer = async (method: 'GET' | 'POST', path: string, query: Record<string, unknown>, body: () => Promise<Buffer>): Promise<DataResponse> => {
    const match = PAGE.exec(path);
    let appId: string;
    try {
      appId = decodeURIComponent(match?.[1] ?? '');
    } catch {
      appId = '';
    }
    const keys = match && appId ? await apps.keys(appId) : undefined;
    const services = keys ? await apps.services(appId) : undefined;
    if (!match || !keys || !services) return page(404, 'Not found', '<p>There is no such page.</p>');
    const appName = keys.appName ?? appId;
    if (match[2] === 'verify_email') {
      if (method !== 'GET') return page(405, 'Not found', '<p>Open the link from the mail.</p>');
      const email = await services.mail.verifyEmail(query.token);
      if (email === undefined) return invalidLink('verification');
      return page(200, 'Email verified', `<p>Thank you: ${email ? `<strong>${escape(email)}</strong>` : 'your email'} is verified for ${escape(appName)}. You can close this page.</p>`);
    }
    if (method === 'GET') {
      const user = await services.mail.userOfResetToken(query.token);
      return user ? chooseForm(appName, query.token as string, user.data.username) : invalidLink('password reset');
    }
    const form = new URLSearchParams((await body()).toString('utf8'));
    const token = form.get('token') ?? '';
    const password = form.get('new_password') ?? '';
    const user = await services.mail.userOfResetToken(token);
    if (!user) return invalidLink('password reset');
    if (password === '') return chooseForm(appName, token, user.data.username, 'Type a new password.');
    if (password !== form.get('confirm_password')) return chooseForm(appName, token, user.data.username, 'The two passwords differ; type the same one twice.');
    try {
      if (!(await services.users.resetPassword(token, password))) return invalidLink('password reset');
    } catch (error) {
      if (error instanceof ParseError) return chooseForm(appName, token, user.data.username, error.message);
      throw error;
    }
    return page(200, 'Password changed', `<p>Your password on ${escape(appName)} is changed. Log in with it in the app.</p>`);
  };
  return (method, path, query, body) => answer(method, path, query, body);
}

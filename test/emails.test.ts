import crypto from 'node:crypto';
import Parse from 'parse/node';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer, dashboardCookie } from './helpers/server.js';

/**
 * Emails: email verification and password reset through the real Parse JS SDK, with the
 * mails delivered to a real SMTP server started here (the `smtp-server` package, with a login), the
 * reset page used in Chromium, and, without SMTP, the outbox the dashboard shows.
 */
interface Received {
  from: string;
  to: string[];
  data: string;
  user?: string;
}

/** An SMTP server on loopback that wants a login and keeps what it receives. */
async function startSmtp(): Promise<{ port: number; mails: Received[]; next: (to: string) => Promise<Received>; close: () => Promise<void> }> {
  const mails: Received[] = [];
  const waiting: Array<{ to: string; resolve: (m: Received) => void }> = [];
  const server = new SMTPServer({
    // Plain SMTP on loopback: a self-signed STARTTLS certificate would be refused by the client, as it should be.
    disabledCommands: ['STARTTLS'],
    authOptional: false,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 'mail-secret') return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString()));
      stream.on('end', () => {
        const mail: Received = { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), data, user: session.user as string };
        mails.push(mail);
        for (const w of waiting.splice(0)) {
          if (mail.to.includes(w.to)) w.resolve(mail);
          else waiting.push(w);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    mails,
    next: (to) => new Promise((resolve) => waiting.push({ to, resolve })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The text of a received mail with quoted-printable soft breaks and escapes undone. */
const textOf = (mail: Received) => mail.data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
const linkIn = (mail: Received) => /https?:\/\/\S+/.exec(textOf(mail))![0]!;

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let server: TestServer;
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  smtp = await startSmtp();
  server = await startTestServer({ BACKYARD_SMTP_URL: `smtp://mailer:mail-secret@127.0.0.1:${smtp.port}`, BACKYARD_MAIL_FROM: 'Todo App <no-reply@todo.example>' });
  app = await createTestApp(server, 'Todo App');
  Parse.initialize(app.appId, app.keys.javascriptKey);
  Parse.serverURL = app.apiURL;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await smtp?.close();
});

describe('password reset', () => {
  it('mails a link through SMTP; the page in Chromium sets a new password, ends the old sessions and is spent', async () => {
    const user = await Parse.User.signUp('reset-me', 'old-password', { email: 'reset-me@example.com' });
    const oldSession = user.getSessionToken()!;
    const arriving = smtp.next('reset-me@example.com');
    await Parse.User.requestPasswordReset('reset-me@example.com');
    const mail = await arriving;
    expect(mail.from).toBe('no-reply@todo.example');
    expect(mail.user).toBe('mailer');
    expect(textOf(mail)).toContain('Subject: Password Reset for Todo App');
    expect(textOf(mail)).toContain("You requested to reset your password for Todo App (your username is 'reset-me').");
    const link = linkIn(mail);
    expect(link.startsWith(`${app.apiURL}/apps/${app.appId}/request_password_reset?token=`)).toBe(true);

    const page = await browser.newPage();
    try {
      await page.goto(link);
      await expect(page.locator('h1').textContent()).resolves.toBe('Choose a new password');
      // Two different passwords: the page says so and changes nothing.
      await page.fill('#new_password', 'new-password');
      await page.fill('#confirm_password', 'other-password');
      await page.click('button[type=submit]');
      await expect(page.locator('[role=alert]').textContent()).resolves.toContain('The two passwords differ');
      await page.fill('#new_password', 'new-password');
      await page.fill('#confirm_password', 'new-password');
      await page.click('button[type=submit]');
      await expect(page.locator('h1').textContent()).resolves.toBe('Password changed');
      // The link is spent.
      await page.goto(link);
      await expect(page.locator('h1').textContent()).resolves.toBe('Invalid link');
    } finally {
      await page.close();
    }
    expect((await Parse.User.logIn('reset-me', 'new-password')).id).toBe(user.id);
    await expect(Parse.User.logIn('reset-me', 'old-password')).rejects.toMatchObject({ code: Parse.Error.OBJECT_NOT_FOUND });
    const withOld = await app.call('GET', '/users/me', { sessionToken: oldSession });
    expect(withOld.body).toEqual({ code: 209, error: 'Invalid session token' });
  });

  it('a link mailed before a password change or an email change (by the user or the master key) no longer sets a password', async () => {
    const user = await Parse.User.signUp('change-then-reset', 'first-password', { email: 'ctr@example.com' });
    const sessionToken = user.getSessionToken()!;
    /** The reset link mailed now to `to`. */
    const mailedLink = async (email: string, to = email) => {
      const arriving = smtp.next(to);
      await Parse.User.requestPasswordReset(email);
      return linkIn(await arriving);
    };
    /** The link opened and its form posted, as a person would: both must answer the invalid-link page. */
    const expectSpent = async (link: string) => {
      const opened = await fetch(link);
      expect(opened.status).toBe(404);
      expect(await opened.text()).toContain('Invalid link');
      const token = new URL(link).searchParams.get('token')!;
      const posted = await fetch(link.split('?')[0]!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, new_password: 'attacker-password', confirm_password: 'attacker-password' }).toString(),
      });
      expect(posted.status).toBe(404);
      expect(await posted.text()).toContain('Invalid link');
      await expect(Parse.User.logIn('change-then-reset', 'attacker-password')).rejects.toMatchObject({ code: Parse.Error.OBJECT_NOT_FOUND });
    };

    // The user changes the password with their session (the SDK's save): the earlier link is spent.
    const beforePassword = await mailedLink('ctr@example.com');
    user.setPassword('second-password');
    await user.save(null, { sessionToken });
    await expectSpent(beforePassword);
    const session = (await Parse.User.logIn('change-then-reset', 'second-password')).getSessionToken()!;

    // The user moves to a new address: the link mailed to the old one is spent, the password kept.
    const beforeEmail = await mailedLink('ctr@example.com');
    await user.save({ email: 'ctr-new@example.com' }, { sessionToken: session });
    await expectSpent(beforeEmail);
    expect((await Parse.User.logIn('change-then-reset', 'second-password')).id).toBe(user.id);

    // The master key (an operator, cloud code) sets the password: the same.
    const beforeMaster = await mailedLink('ctr-new@example.com');
    expect((await app.call('PUT', `/users/${user.id}`, { master: true, body: { password: 'third-password' } })).status).toBe(200);
    await expectSpent(beforeMaster);

    // A link asked for after the change works.
    const after = await mailedLink('ctr-new@example.com');
    const form = new URLSearchParams({ token: new URL(after).searchParams.get('token')!, new_password: 'fourth-password', confirm_password: 'fourth-password' });
    const set = await fetch(after.split('?')[0]!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    expect(set.status).toBe(200);
    expect((await Parse.User.logIn('change-then-reset', 'fourth-password')).id).toBe(user.id);
  });

  it('answers the same for an unknown address, and refuses a request without an email as Parse Server', async () => {
    const before = smtp.mails.length;
    await expect(Parse.User.requestPasswordReset('nobody@example.com')).resolves.toBeDefined();
    expect(await app.call('POST', '/requestPasswordReset', { body: {} })).toMatchObject({ status: 400, body: { code: 204, error: 'you must provide an email' } });
    expect(await app.call('POST', '/requestPasswordReset', { body: { email: 5 } })).toMatchObject({ status: 400, body: { code: 125, error: 'you must provide a valid email string' } });
    // A forged token shows the invalid-link page, and sets nothing.
    const forged = await fetch(`${app.apiURL}/apps/${app.appId}/request_password_reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'abcdefghij.forged', new_password: 'x', confirm_password: 'x' }).toString(),
    });
    expect(forged.status).toBe(404);
    expect(forged.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await forged.text()).toContain('Invalid link');
    // Mails go out after the answer: a later mail's arrival shows that none went to the unknown address before it.
    const later = smtp.next('reset-me@example.com');
    await Parse.User.requestPasswordReset('reset-me@example.com');
    await later;
    expect(smtp.mails.slice(before).map((m) => m.to)).toEqual([['reset-me@example.com']]);
  });
});

describe('email verification', () => {
  it('with verifyUserEmails and preventLoginWithUnverifiedEmail: no session until the mailed link is opened', async () => {
    await server.platform.services.backendApps.configure(app.appId, { verifyUserEmails: true, preventLoginWithUnverifiedEmail: true });
    const arriving = smtp.next('verify-me@example.com');
    const signup = await app.call('POST', '/users', { body: { username: 'verify-me', password: 'pw', email: 'verify-me@example.com' } });
    expect(signup.status).toBe(201);
    expect(signup.body.sessionToken).toBeUndefined();
    const refused = await app.call('POST', '/login', { body: { username: 'verify-me', password: 'pw' } });
    expect(refused.body).toEqual({ code: 205, error: 'User email is not verified.' });
    const mail = await arriving;
    expect(textOf(mail)).toContain('Subject: Please verify your e-mail for Todo App');
    const link = linkIn(mail);
    const stored = await app.call('GET', `/users/${signup.body.objectId}`, { master: true });
    expect(stored.body.emailVerified).toBe(false);
    expect(JSON.stringify(stored.body)).not.toContain('_email_verify_token');

    const opened = await fetch(link);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain('verify-me@example.com</strong> is verified for Todo App');
    const user = await Parse.User.logIn('verify-me', 'pw');
    expect(user.get('emailVerified')).toBe(true);
    expect((await fetch(link)).status).toBe(404);
    // Verified: asking again answers {} and sends nothing.
    const count = smtp.mails.length;
    await Parse.User.requestEmailVerification('verify-me@example.com');
    const later = smtp.next('verify-me@example.com');
    await Parse.User.requestPasswordReset('verify-me@example.com');
    expect(textOf(await later)).toContain('Subject: Password Reset');
    expect(smtp.mails.length).toBe(count + 1);
  });

  it('with verifyUserEmails and preventLoginWithUnverifiedEmail: a signup without an email, or through a provider, gets no session either', async () => {
    // parse-server src/RestWrite.js, createSessionTokenIfNeeded: no signup gets a session while both are on;
    // src/Routers/UsersRouter.js, _authenticateUserFromRequest: a login needs emailVerified true.
    await server.platform.services.backendApps.configure(app.appId, { verifyUserEmails: true, preventLoginWithUnverifiedEmail: true });
    const signup = await app.call('POST', '/users', { body: { username: 'no-email', password: 'pw' } });
    expect(signup.status).toBe(201);
    expect(signup.body).not.toHaveProperty('sessionToken');
    expect(await app.call('POST', '/login', { body: { username: 'no-email', password: 'pw' } })).toMatchObject({ status: 400, body: { code: 205, error: 'User email is not verified.' } });
    const anonymous = await app.call('POST', '/users', { body: { authData: { anonymous: { id: crypto.randomUUID() } } } });
    expect(anonymous).toMatchObject({ status: 201, body: { username: expect.stringMatching(/^[A-Za-z0-9]{25}$/), authDataResponse: {} } });
    expect(anonymous.body).not.toHaveProperty('sessionToken');
    // The master key still logs the user in when it says so, and a verified user logs in.
    const asMaster = await app.call('POST', '/login', { master: true, body: { username: 'no-email', password: 'pw', ignoreEmailVerification: true } });
    expect(asMaster.body.sessionToken).toMatch(/^r:/);
    await app.call('PUT', `/users/${signup.body.objectId}`, { master: true, body: { emailVerified: true } });
    expect((await app.call('POST', '/login', { body: { username: 'no-email', password: 'pw' } })).body.sessionToken).toMatch(/^r:/);
  });

  it('sends a new link on request and when the email changes; an old link stops working', async () => {
    await server.platform.services.backendApps.configure(app.appId, { verifyUserEmails: true, preventLoginWithUnverifiedEmail: false });
    const first = smtp.next('change-me@example.com');
    const user = await Parse.User.signUp('change-me', 'pw', { email: 'change-me@example.com' });
    const firstLink = linkIn(await first);
    const again = smtp.next('change-me@example.com');
    await Parse.User.requestEmailVerification('change-me@example.com');
    const secondLink = linkIn(await again);
    expect(secondLink).not.toBe(firstLink);
    expect((await fetch(firstLink)).status).toBe(404);
    const changed = smtp.next('changed@example.com');
    await user.save({ email: 'changed@example.com' }, { sessionToken: user.getSessionToken()! });
    const thirdLink = linkIn(await changed);
    // The link mailed to the old address does not verify the new one.
    expect((await fetch(secondLink)).status).toBe(404);
    expect((await app.call('GET', `/users/${user.id}`, { master: true })).body).toMatchObject({ email: 'changed@example.com', emailVerified: false });
    expect((await fetch(thirdLink)).status).toBe(200);
    const stored = await app.call('GET', `/users/${user.id}`, { master: true });
    expect(stored.body).toMatchObject({ email: 'changed@example.com', emailVerified: true });
  });
});

describe('without an SMTP server, and an SMTP server an app chooses', () => {
  it('keeps the mail in the outbox, which the dashboard shows with its link', async () => {
    const quiet = await startTestServer();
    try {
      const other = await createTestApp(quiet, 'Quiet App');
      await other.call('POST', '/users', { body: { username: 'outboxed', password: 'pw', email: 'outboxed@example.com' } });
      expect((await other.call('POST', '/requestPasswordReset', { body: { email: 'outboxed@example.com' } })).body).toEqual({});
      const cookie = await dashboardCookie(quiet);
      let text = '';
      for (const deadline = Date.now() + 10_000; !text.includes('Password Reset for Quiet App') && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        text = await (await fetch(`${quiet.url}/dashboard/apps/${other.appId}/mail`, { headers: { cookie } })).text();
      }
      expect(text).toContain('Password Reset for Quiet App');
      expect(text).toContain('kept here');
      const link = /href="([^"]*request_password_reset\?token=[^"]+)"/.exec(text)![1]!.replace(/&amp;/g, '&');
      const form = await fetch(link);
      expect(form.status).toBe(200);
      expect(await form.text()).toContain('Choose a new password for <strong>outboxed</strong> on Quiet App');
    } finally {
      await quiet.close();
    }
  });

  it("an app's own SMTP server on a loopback address the operator did not allow is not connected to", async () => {
    const other = await createTestApp(server, 'Owner SMTP');
    await server.platform.services.backendApps.configure(other.appId, { emailAdapter: { smtpUrl: `smtp://mailer:mail-secret@127.0.0.1:${smtp.port}`, fromAddress: 'Owner <owner@example.com>' } });
    const count = smtp.mails.length;
    await other.call('POST', '/users', { body: { username: 'ssrf', password: 'pw', email: 'ssrf@example.com' } });
    await other.call('POST', '/requestPasswordReset', { body: { email: 'ssrf@example.com' } });
    let mails = await server.platform.services.dataApi.apps.mails(other.appId);
    for (const deadline = Date.now() + 10_000; mails.length === 0 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      mails = await server.platform.services.dataApi.apps.mails(other.appId);
    }
    expect(mails[0]).toMatchObject({ status: 'failed', from: 'Owner <owner@example.com>', error: expect.stringContaining('127.0.0.1 is not a public address') });
    expect(smtp.mails.length).toBe(count);
  });
});

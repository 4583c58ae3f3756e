/**
 * The dashboard's Web App pages with real git pushes, image builds and containers:
 * status, appURL, repository, settings (editable through updateWebApp's checks), variable keys
 * (values settable, never shown), deployments, the build and container logs arriving live in the
 * browser while a deployment runs, and redeploy.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import type { Account } from '../src/platform/accounts/service.js';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { SKIP_DOCKER, requireDocker } from './helpers/devenvs.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { WEBAPP_ENV, commit, fetchApp, push, removeWebApps } from './helpers/webapps.js';

const SECRET = 'value-the-dashboard-never-shows';
const OTHER_SECRET = 'second-value-never-shown';

/** An app whose build takes a few seconds, in steps, so that its log can be watched arriving. */
const slowApp = (page: string): Record<string, string> => ({
  Dockerfile: [
    `FROM ${OFFLINE_IMAGE}`,
    'RUN echo "step one: preparing" && sleep 2',
    'RUN echo "step two: still building" && sleep 2',
    'COPY www /www',
    'EXPOSE 8080',
    'CMD ["sh", "-c", "echo serving on 8080 && exec httpd -f -v -p 8080 -h /www"]',
    '',
  ].join('\n'),
  'www/index.html': page,
});

describe.skipIf(SKIP_DOCKER)('Web Apps in the dashboard', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let work: string;
  let alice: Account;
  let appId: string;
  let appURL: string;

  const shoot = async (name: string) => {
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, `dashboard-${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer(WEBAPP_ENV);
    alice = (await server.platform.services.accounts.findByLogin('alice'))!;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-dashboard-webapps-'));
    const repo = path.join(work, 'hello');
    await commit(repo, slowApp('<h1>Hello from the dashboard test</h1>\n'), 'first');
    await push(server.url, repo, 'alice', 'hello', server.alice);

    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Account token').fill(server.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      await server.platform.services.webApps.idle().catch(() => undefined);
      await server.close();
      await removeWebApps(server.home);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('shows a deployment\'s build and container logs arriving live, until it is active', async () => {
    const created = await server.platform.services.webApps.create(alice, {
      appName: 'hello',
      repositoryOwnerLogin: 'alice',
      repositoryName: 'hello',
      environmentVariables: [{ key: 'GREETING', value: SECRET }],
    });
    appId = created.appId;
    appURL = created.appURL;

    await page.goto(`${server.url}/dashboard`);
    const card = page.locator('.card', { hasText: 'hello' });
    await expect(card.textContent()).resolves.toMatch(/deploying|running/);
    await card.getByRole('link', { name: 'hello', exact: true }).click();
    await page.waitForURL(created.dashboardURL);
    await page.locator('tbody tr').first().getByRole('link').click();
    await page.waitForSelector('#deployment[data-deploy-events]');

    // The first step shows before the second has run: the log arrives as the build goes.
    await page.waitForFunction(() => document.getElementById('build-logs')?.textContent?.includes('step one: preparing'), undefined, { timeout: 30_000 });
    expect(await page.locator('#build-logs').textContent()).not.toContain('step two: still building');
    await expect(page.locator('#deploy-status').textContent()).resolves.toMatch(/queued|building/);
    await shoot('webapp-deployment-live');
    await page.waitForFunction(() => document.getElementById('build-logs')?.textContent?.includes('step two: still building'), undefined, { timeout: 30_000 });
    await page.waitForFunction(() => document.getElementById('deployment')?.dataset.state === 'finished', undefined, { timeout: 60_000 });
    await expect(page.locator('#deploy-status').textContent()).resolves.toBe('active');
    await page.waitForFunction(() => document.getElementById('container-logs')?.textContent?.includes('serving on 8080'), undefined, { timeout: 10_000 });
    await expect(page.locator('#deploy-commit').textContent()).resolves.toMatch(/^[0-9a-f]{40}$/);
    // Each line once: what the page showed at first and what arrived later do not overlap.
    const lines = (await page.locator('#build-logs').textContent())!.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.includes('Step 1/6')).length).toBe(1);
    expect(lines.filter((l) => /\d\d  step two: still building$/.test(l)).length).toBe(1);
    const rows = (await server.platform.services.webApps.deployment(alice.id, appId, created.lastDeployment!.id, { includeBuildLogs: true, buildLogsLimit: 1000 })).buildLogs;
    expect(lines.length).toBe(rows.length);
    await shoot('webapp-deployment');
    expect((await fetchApp(appURL)).text).toContain('Hello from the dashboard test');
  });

  it('shows the app: status, appURL, repository, branch and variable keys, never a value', async () => {
    await page.goto(`${server.url}/dashboard/web-apps/${appId}`);
    await expect(page.locator('.actions .badge').textContent()).resolves.toBe('running');
    const main = (await page.textContent('main'))!;
    expect(main).toContain('alice/hello');
    await expect(page.getByLabel('Branch', { exact: true }).inputValue()).resolves.toBe('main');
    expect(main).toContain('GREETING');
    await expect(page.getByRole('link', { name: appURL, exact: true }).getAttribute('href')).resolves.toBe(appURL);
    expect(await page.content()).not.toContain(SECRET);
    await shoot('webapp');
  });

  it('sets a variable (a new deployment starts, the value is never shown) and redeploys', async () => {
    await page.getByLabel('Key').fill('API_TOKEN');
    await page.getByLabel('Value').fill(OTHER_SECRET);
    await page.getByRole('button', { name: 'Set variable' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Set API_TOKEN. A new deployment started.');
    expect(await page.content()).not.toContain(OTHER_SECRET);
    expect(await page.content()).not.toContain(SECRET);
    const keys = await page.locator('#variables-heading ~ ul code').allTextContents();
    expect(keys).toEqual(['GREETING', 'API_TOKEN']);
    const app = await server.platform.services.webApps.get(alice.id, appId);
    expect(app.environmentVariablesKeys).toEqual(['GREETING', 'API_TOKEN']);
    expect(app.status).toBe('deploying');
    await server.platform.services.webApps.idle();

    await page.goto(`${server.url}/dashboard/web-apps/${appId}`);
    await page.getByRole('button', { name: 'Redeploy' }).click();
    await page.waitForURL(/\/deployments\//);
    await expect(page.getByRole('status').textContent()).resolves.toContain('A new deployment started.');
    await page.waitForFunction(() => document.getElementById('deployment')?.dataset.state === 'finished', undefined, { timeout: 60_000 });
    await expect(page.locator('#deploy-status').textContent()).resolves.toBe('active');
    await page.goto(`${server.url}/dashboard/web-apps/${appId}`);
    const statuses = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(statuses.slice(0, 3)).toEqual(['active', 'superseded', 'superseded']);
  });

  it('changes settings from the form (only those changed), and a bad value shows the operation\'s error and changes nothing', async () => {
    const before = await server.platform.services.webApps.get(alice.id, appId);
    expect(before).toMatchObject({ autoDeploy: false, port: 8080, healthCheckPath: '/', branchName: 'main', rootDirPath: '.' });
    await page.goto(`${server.url}/dashboard/web-apps/${appId}`);
    const settings = page.getByRole('form', { name: 'Settings' });
    await expect(settings.getByLabel('Port').inputValue()).resolves.toBe('8080');

    // autoDeploy alone (off by default): saved, and no deployment starts.
    await settings.getByLabel('Deploy again on every push to the branch').check();
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved autoDeploy. No new deployment was needed.');
    let now = await server.platform.services.webApps.get(alice.id, appId);
    expect(now).toMatchObject({ autoDeploy: true, port: 8080, healthCheckPath: '/' });
    expect(now.lastDeployment!.id).toBe(before.lastDeployment!.id);
    await expect(settings.getByLabel('Deploy again on every push to the branch').isChecked()).resolves.toBe(true);

    // A bad port beside a good health check path: the operation's error, the values as typed, nothing saved.
    await settings.getByLabel('Port').fill('0');
    await settings.getByLabel('Health check path').fill('/index.html');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await expect(settings.getByRole('alert').textContent()).resolves.toContain('port must be at least 1.');
    await expect(settings.getByLabel('Port').inputValue()).resolves.toBe('0');
    await expect(settings.getByLabel('Port').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(settings.getByLabel('Health check path').inputValue()).resolves.toBe('/index.html');
    await expect(settings.getByLabel('Health check path').getAttribute('aria-invalid')).resolves.toBeNull();
    await shoot('webapp-settings-error');
    now = await server.platform.services.webApps.get(alice.id, appId);
    expect(now).toMatchObject({ autoDeploy: true, port: 8080, healthCheckPath: '/' });
    expect(now.lastDeployment!.id).toBe(before.lastDeployment!.id);

    // A path the service refuses, and text where a number belongs: each error names its field.
    await settings.getByLabel('Port').fill('8080');
    await settings.getByLabel('Health check path').fill('health');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await expect(settings.getByRole('alert').textContent()).resolves.toContain('healthCheckPath "health" is not a path');
    await expect(settings.getByLabel('Health check path').inputValue()).resolves.toBe('health');
    await settings.getByLabel('Health check path').fill('/');
    await settings.getByLabel('Port').fill('eighty');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await expect(settings.getByRole('alert').textContent()).resolves.toContain('port must be a number, not the string "eighty".');
    now = await server.platform.services.webApps.get(alice.id, appId);
    expect(now).toMatchObject({ port: 8080, healthCheckPath: '/' });
    expect(now.lastDeployment!.id).toBe(before.lastDeployment!.id);

    // A health check path the app serves: saved, and a new deployment starts and goes live with it.
    await settings.getByLabel('Port').fill('8080');
    await settings.getByLabel('Health check path').fill('/index.html');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved healthCheckPath. A new deployment started.');
    await expect(settings.getByLabel('Health check path').inputValue()).resolves.toBe('/index.html');
    now = await server.platform.services.webApps.get(alice.id, appId);
    expect(now).toMatchObject({ healthCheckPath: '/index.html', autoDeploy: true, port: 8080 });
    expect(now.lastDeployment!.id).not.toBe(before.lastDeployment!.id);
    await server.platform.services.webApps.idle();
    expect(await server.platform.services.webApps.get(alice.id, appId)).toMatchObject({ status: 'running', activeDeployment: { id: now.lastDeployment!.id } });
    await page.goto(`${server.url}/dashboard/web-apps/${appId}`);
    await shoot('webapp-settings');

    // Saving the form unchanged sends nothing.
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Nothing changed');
    expect((await server.platform.services.webApps.get(alice.id, appId)).lastDeployment!.id).toBe(now.lastDeployment!.id);
  });

  it('answers 404 to another account, for pages, streams and changes', async () => {
    const signIn = await fetch(`${server.url}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: server.bob }),
    });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const overview = await (await fetch(`${server.url}/dashboard`, { headers: { cookie } })).text();
    expect(overview).not.toContain(appId);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(overview)![1]!;
    const deploymentId = (await server.platform.services.webApps.get(alice.id, appId)).lastDeployment!.id;
    for (const url of [`/dashboard/web-apps/${appId}`, `/dashboard/web-apps/${appId}/deployments/${deploymentId}`, `/dashboard/web-apps/${appId}/deployments/${deploymentId}/events`]) {
      const res = await fetch(`${server.url}${url}`, { headers: { cookie } });
      expect(res.status, url).toBe(404);
      expect(await res.text(), url).not.toContain('alice/hello');
    }
    for (const [url, fields] of [
      [`/dashboard/web-apps/${appId}/deploy`, {}],
      [`/dashboard/web-apps/${appId}/variables`, { key: 'X', value: 'y' }],
      [`/dashboard/web-apps/${appId}/variables/remove`, { key: 'GREETING' }],
      [`/dashboard/web-apps/${appId}/settings`, { healthCheckPath: '/bob', port: '9090' }],
    ] as Array<[string, Record<string, string>]>) {
      const res = await fetch(`${server.url}${url}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, _csrf: csrf }),
      });
      expect(res.status, url).toBe(404);
    }
    const app = await server.platform.services.webApps.get(alice.id, appId);
    expect(app.environmentVariablesKeys).toEqual(['GREETING', 'API_TOKEN']);
    expect(app).toMatchObject({ healthCheckPath: '/index.html', port: 8080 });
    expect(app.lastDeployment!.id).toBe(deploymentId);
  });
});

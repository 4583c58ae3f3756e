/**
 * The dashboard's development environment pages with a real Docker engine: the
 * overview lists the environment, its page lists the executions, and an execution's output arrives
 * live in the browser (server-sent events) until the command exits with its code; the environment's
 * page runs a command typed into its form, and a running command's page ends it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { DEVENV_ENV, SKIP_DOCKER, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;
let environmentId: string;
let aliceId: string;

const shoot = async (name: string) => {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `dashboard-${name}.png`), fullPage: true });
};

describe.skipIf(SKIP_DOCKER)('development environments in the dashboard', () => {
  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer({ ...DEVENV_ENV, BACKYARD_EXEC_WAIT_MS: '300' });
    aliceId = (await server.platform.services.accounts.findByLogin('alice'))!.id;
    environmentId = (await server.platform.services.devenvs.create(aliceId, 'Build the todo app')).id;
    const done = await server.platform.services.devenvs.execute(aliceId, environmentId, 'echo "hello from the container"; uname -s');
    expect(done.status).toBe('exited');

    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Account token').fill(server.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      await removeDevenvs(server.home);
      await server.close();
    }
  });

  it('lists the environment on the overview and its executions on its page', async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('link', { name: 'Build the todo app' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Build the todo app');
    const row = (await page.locator('tbody tr').first().textContent())!;
    expect(row).toContain('echo "hello from the container"; uname -s');
    expect(row).toContain('exited');
    await page.getByRole('link', { name: /hello from the container/ }).click();
    await expect(page.locator('#stdout').textContent()).resolves.toBe('hello from the container\nLinux\n');
    await expect(page.locator('#exit-code').textContent()).resolves.toBe('0');
  });

  it('shows a running command\'s output as it arrives, then its exit code', async () => {
    const command = 'echo started; sleep 2; echo "half way"; echo "a warning" >&2; sleep 2; echo finished; exit 3';
    const running = await server.platform.services.devenvs.execute(aliceId, environmentId, command);
    expect(running.status).toBe('running');

    await page.goto(`${server.url}/dashboard/environments/${environmentId}`);
    const row = page.locator('tbody tr').first();
    await expect(row.textContent()).resolves.toContain('running');
    await shoot('environment');
    await row.getByRole('link').click();
    await expect(page.locator('#status').textContent()).resolves.toBe('running');
    await page.waitForFunction(() => document.getElementById('stdout')?.textContent?.includes('started'));
    const before = (await page.locator('#stdout').textContent())!;
    expect(before).not.toContain('finished');

    // Without reloading: the rest arrives over server-sent events.
    await page.waitForFunction(() => document.getElementById('stdout')?.textContent?.includes('half way'), undefined, { timeout: 10_000 });
    await page.waitForFunction(() => document.getElementById('stderr')?.textContent?.includes('a warning'), undefined, { timeout: 10_000 });
    await shoot('execution-live');
    await page.waitForFunction(() => document.getElementById('execution')?.dataset.state === 'exited', undefined, { timeout: 15_000 });
    await expect(page.locator('#stdout').textContent()).resolves.toBe('started\nhalf way\nfinished\n');
    await expect(page.locator('#stderr').textContent()).resolves.toBe('a warning\n');
    await expect(page.locator('#status').textContent()).resolves.toBe('exited');
    await expect(page.locator('#exit-code').textContent()).resolves.toBe('3');
    await shoot('execution');

    // A fresh load shows the same final state.
    await page.reload();
    await expect(page.locator('#exit-code').textContent()).resolves.toBe('3');
    await page.goto(`${server.url}/dashboard`);
    await shoot('overview-environments');
  });

  it('runs a command typed into the environment\'s page and shows its output, escaped, and its status', async () => {
    await page.goto(`${server.url}/dashboard/environments/${environmentId}`);
    const command = 'echo "<b id=injected>from the form</b>"; echo oops >&2; exit 4';
    await page.getByLabel('Command', { exact: true }).fill(command);
    await page.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/executions\/[^/?]+(\?|$)/);
    await page.waitForFunction(() => document.getElementById('execution')?.dataset.state === 'exited', undefined, { timeout: 15_000 });
    await expect(page.locator('#stdout').textContent()).resolves.toBe('<b id=injected>from the form</b>\n');
    await expect(page.locator('#stderr').textContent()).resolves.toBe('oops\n');
    await expect(page.locator('#injected').count()).resolves.toBe(0);
    await expect(page.locator('#exit-code').textContent()).resolves.toBe('4');
    await expect(page.locator('[aria-label="Command"]').textContent()).resolves.toBe(command);
    const executionId = new URL(page.url()).pathname.split('/').pop()!;
    expect(await server.platform.services.devenvs.inspect(aliceId, environmentId, executionId)).toMatchObject({ status: 'exited', exitCode: 4 });
  });

  it('ends a running command with the End button, and offers no End once it has exited', async () => {
    await page.goto(`${server.url}/dashboard/environments/${environmentId}`);
    await page.getByLabel('Command', { exact: true }).fill('echo waiting; sleep 600');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/executions\/[^/?]+(\?|$)/);
    const executionId = new URL(page.url()).pathname.split('/').pop()!;
    await page.waitForFunction(() => document.getElementById('stdout')?.textContent?.includes('waiting'), undefined, { timeout: 10_000 });
    await expect(page.locator('#status').textContent()).resolves.toBe('running');
    await shoot('execution-end');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'End' }).click();
    await page.waitForURL(/flash=/);
    await expect(page.locator('#status').textContent()).resolves.toBe('exited');
    const ended = await server.platform.services.devenvs.inspect(aliceId, environmentId, executionId);
    expect(ended.status).toBe('exited');
    expect([143, 137]).toContain(ended.exitCode);
    await expect(page.locator('#exit-code').textContent()).resolves.toBe(String(ended.exitCode));
    await expect(page.getByRole('alert').or(page.locator('.notice')).first().textContent()).resolves.toContain(`exit code ${ended.exitCode}`);
    await expect(page.getByRole('button', { name: 'End' }).count()).resolves.toBe(0);
  });

  it('refuses a command without the session\'s CSRF token, and names the field of an empty one', async () => {
    const before = (await server.platform.services.devenvs.executions(aliceId, environmentId)).length;
    const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const forged = await fetch(`${server.url}/dashboard/environments/${environmentId}/commands`, {
      method: 'POST',
      headers: { cookie: cookies, origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'command=touch%20%2Fworkspace%2Fforged',
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect((await server.platform.services.devenvs.executions(aliceId, environmentId)).length).toBe(before);

    await page.goto(`${server.url}/dashboard/environments/${environmentId}`);
    // The browser would refuse an empty required field: send the form as it is, emptied by hand.
    await page.getByLabel('Command', { exact: true }).evaluate((input: HTMLInputElement) => {
      input.required = false;
      input.value = '';
    });
    await page.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/flash=/);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${environmentId}`);
    await expect(page.locator('.notice').first().textContent()).resolves.toMatch(/command must not be empty/);
    expect((await server.platform.services.devenvs.executions(aliceId, environmentId)).length).toBe(before);
  });
});

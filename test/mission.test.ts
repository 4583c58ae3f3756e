/**
 * The whole mission, end to end through MCP, as a chat assistant would use Backyard: read a guide;
 * create a Backend App; create the spec's `Project` and `ToDo` classes and objects through
 * `callBackendAPI`; deploy a cloud function and a hosted page with `deployCloudCode`; activate
 * hosting and load the page in Chromium; create a development environment, clone the app's
 * repository into it with a minted token, commit and push from there; deploy it as a Web App and
 * load it in Chromium, where it reads the Backend App's ToDos.
 *
 * Then it follows the guide `deploy-a-web-app-from-the-built-in-git-host` as served, step by step:
 * its commands in the environment, its Dockerfile (on the Node base image it names) deployed as a Web
 * App that answers.
 *
 * Reaching Backyard from inside a container: the environment reaches it at the `backyardURL` that
 * createDevelopmentEnvironment answers (`http://backyard.internal:<port>`, the host's bridge address
 * in the container's /etc/hosts), with no relay of the test's own. The environment image is the one
 * Backyard chooses by itself with its default settings: alpine cannot be pulled here, so its own
 * Debian image (debianImage.ts, built once by scripts/ensure-docker), where `git` runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { DEVENV_ENV, SKIP_DOCKER, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { modernHttpClient, type AnyMcpClient } from './helpers/mcpClients.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import {
  WEBAPP_ENV,
  call,
  commit,
  fetchApp,
  push,
  removeWebApps,
  settle,
} from './helpers/webapps.js';
import { DEBIAN_IMAGE } from '../src/platform/devenvs/debianImage.js';
import { OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { homeFilter } from '../src/platform/devenvs/labels.js';
import { imageFilter, webAppHomeFilter } from '../src/platform/webapps/labels.js';

describe.skipIf(SKIP_DOCKER)('the mission, through MCP as a chat assistant', () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let browser: Browser | undefined;
  let work: string;
  const chatTitle = 'Plan my projects';
  /** Filled in as the mission goes. */
  const state: Record<string, any> = {};

  /**
   * Runs `command` in the environment and, as an assistant does when a command outlasts
   * executeCommand's wait (a loaded machine), follows it with inspectCommandExecution for up to 2 minutes.
   */
  async function executeToEnd(developmentEnvironmentId: string, command: string): Promise<Record<string, any>> {
    let result = await call(client, 'executeCommand', { developmentEnvironmentId, command });
    for (const deadline = Date.now() + 120_000; result.status === 'running' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      result = await call(client, 'inspectCommandExecution', { developmentEnvironmentId, commandExecutionId: result.id });
    }
    return result;
  }

  beforeAll(async () => {
    await requireDocker(OFFLINE_IMAGE, DEBIAN_IMAGE);
    // Backyard's default image (no BACKYARD_DEVENV_IMAGE): it chooses by itself. Node needs more than 64 MiB.
    const { BACKYARD_DEVENV_IMAGE: _busybox, ...limits } = DEVENV_ENV;
    server = await startTestServer({ ...limits, ...WEBAPP_ENV, BACKYARD_WEBAPP_MEMORY_MB: '256', BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS: '30000' });
    client = await modernHttpClient(server.url, server.alice);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-mission-'));
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await client?.close();
    if (server) {
      await server.platform.services.webApps.idle();
      await server.close();
      await removeWebApps(server.home);
      await removeDevenvs(server.home);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('reads a guide first', async () => {
    const { content } = await call(client, 'getGuide', { guideTitle: 'create-a-backend-app-and-model-data' });
    expect(content).toContain('Call `createBackendApp`');
    const webGuide = await call(client, 'getGuide', { guideTitle: 'deploy-a-web-app-from-the-built-in-git-host' });
    expect(webGuide.content).toContain('Call `createWebApp`');
  });

  it('creates a Backend App and the spec\'s Project and ToDo classes through callBackendAPI', async () => {
    expect(await call(client, 'getBackendApps', { appName: 'todo-planner' })).toEqual({ backendApps: [] });
    const app = await call(client, 'createBackendApp', { appName: 'todo-planner' });
    state.app = app;
    const api = async (requests: Array<Record<string, unknown>>) => (await call(client, 'callBackendAPI', { appId: app.appId, requests })).responses as Array<{ code: number; body: any }>;

    const [schemas] = await api([{ method: 'GET', url: '/schemas', body: {} }]);
    expect(schemas!.code).toBe(200);
    const str = { type: 'String' };
    const created = await api([
      {
        method: 'POST',
        url: '/schemas/Project',
        body: { className: 'Project', fields: { name: str, firstName: str, lastName: str, AverageGrade: { type: 'Number' }, duration: { type: 'Number' }, fees: { type: 'Number' }, level: str } },
      },
      {
        method: 'POST',
        url: '/schemas/ToDo',
        body: {
          className: 'ToDo',
          fields: {
            title: str, url: str, isCompleted: { type: 'Boolean' }, schedule: { type: 'Date' }, order: { type: 'Number' }, description: str,
            attachmentt: { type: 'File' }, project: { type: 'Pointer', targetClass: 'Project' }, name: str, attachment: { type: 'File' }, task: str,
            Nombre: str, edad: str, correo: str, matricula: str, Edad: str, Matricula: str, nombre: str, Correo: str, query: str,
          },
        },
      },
    ]);
    expect(created.map((r) => r.code)).toEqual([200, 200]);
    const [after] = await api([{ method: 'GET', url: '/schemas/ToDo', body: {} }]);
    expect(after!.body.fields).toMatchObject({ project: { type: 'Pointer', targetClass: 'Project' }, schedule: { type: 'Date' }, Nombre: { type: 'String' }, nombre: { type: 'String' } });

    const [project] = await api([{ method: 'POST', url: '/classes/Project', body: { name: 'Website relaunch', level: 'high', duration: 6, fees: 12000, AverageGrade: 4.5 } }]);
    expect(project!.code).toBe(201);
    const pointer = { __type: 'Pointer', className: 'Project', objectId: project!.body.objectId };
    const todos = await api([
      { method: 'POST', url: '/classes/ToDo', body: { title: 'Write the new home page', isCompleted: false, order: 1, project: pointer, schedule: { __type: 'Date', iso: '2026-12-01T09:00:00.000Z' } } },
      { method: 'POST', url: '/classes/ToDo', body: { title: 'Choose the hosting', isCompleted: true, order: 2, project: pointer } },
    ]);
    expect(todos.map((r) => r.code)).toEqual([201, 201]);
    state.projectId = project!.body.objectId;
  });

  it('deploys a cloud function and a hosted page, activates hosting and loads the page', async () => {
    const { appId } = state.app;
    const page = [
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Planner</title></head><body>',
      '<h1>Planner</h1><p id="open">loading</p>',
      `<script src="${server.platform.services.urls.sdkScript}"></script>`,
      '<script>',
      "window.addEventListener('load', function () {",
      `  Parse.initialize('${appId}', '${state.app.javascriptKey}');`,
      `  Parse.serverURL = '${state.app.apiURL}';`,
      "  Parse.Cloud.run('countOpenToDos').then(function (n) { document.getElementById('open').textContent = 'Open ToDos: ' + n; },",
      "    function (e) { document.getElementById('open').textContent = 'error: ' + e.message; });",
      '});',
      '</script></body></html>',
      '',
    ].join('\n');
    const deployed = await call(client, 'deployCloudCode', {
      appId,
      changes: [
        {
          path: 'cloud/todo/functions/countOpenToDos.js',
          operation: 'write',
          writeMode: 'overwrite',
          data: "Parse.Cloud.define('countOpenToDos', async () => {\n  const query = new Parse.Query('ToDo');\n  query.notEqualTo('isCompleted', true);\n  return query.count({ useMasterKey: true });\n});\n",
        },
        { path: 'cloud/main.js', operation: 'write', writeMode: 'append', data: "\nrequire('./todo/functions/countOpenToDos.js');\n" },
        { path: 'public/index.html', operation: 'write', writeMode: 'overwrite', data: page },
      ],
    });
    expect(deployed.warnings).toEqual([]);
    const run = await call(client, 'callBackendAPI', { appId, requests: [{ method: 'POST', url: '/functions/countOpenToDos', body: {} }] });
    expect(run.responses).toEqual([{ code: 200, body: { result: 1 } }]);

    const { publicWebHostingURL } = await call(client, 'activateWebHosting', { appId });
    expect(publicWebHostingURL).toBe(`http://todo-planner.localhost:${new URL(server.url).port}/`);
    expect((await fetchApp(publicWebHostingURL)).text).toContain('<h1>Planner</h1>');
    const tab = await browser!.newPage();
    try {
      await tab.goto(publicWebHostingURL);
      await tab.waitForFunction(() => document.getElementById('open')?.textContent?.startsWith('Open ToDos'), undefined, { timeout: 15_000 });
      expect(await tab.textContent('#open')).toBe('Open ToDos: 1');
    } finally {
      await tab.close();
    }
  });

  it('creates a development environment, clones the app\'s repository into it with a minted token, and pushes from there', async () => {
    // The person's repository: a static front end served by busybox httpd, not yet configured.
    const repo = path.join(work, 'todo-web');
    await commit(repo, {
      Dockerfile: `FROM ${OFFLINE_IMAGE}\nCOPY site /www\nEXPOSE 8080\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      'site/index.html': [
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ToDos</title></head><body>',
        '<h1>ToDos</h1><ul id="list"></ul>',
        '<script src="config.js"></script>',
        '<script>',
        'var s = document.createElement("script"); s.src = window.CONFIG.sdk; s.onload = function () {',
        '  Parse.initialize(window.CONFIG.appId, window.CONFIG.javascriptKey); Parse.serverURL = window.CONFIG.apiURL;',
        '  new Parse.Query("ToDo").ascending("order").find().then(function (todos) {',
        '    var list = document.getElementById("list");',
        '    todos.forEach(function (t) { var li = document.createElement("li"); li.textContent = t.get("title"); list.appendChild(li); });',
        '    document.body.setAttribute("data-loaded", String(todos.length));',
        '  });',
        '}; document.head.appendChild(s);',
        '</script></body></html>',
        '',
      ].join('\n'),
    }, 'The front end');
    await push(server.url, repo, 'alice', 'todo-web', server.alice);

    const environment = await call(client, 'createDevelopmentEnvironment', { chatTitle });
    state.environmentId = environment.id;
    // Alpine cannot be pulled here: Backyard chose its own image by itself, and says how to install there.
    expect(environment).toMatchObject({ image: DEBIAN_IMAGE, installCommand: 'apt-get update && apt-get install -y <package>' });
    expect(server.platform.config.devenvImage).toBe('alpine:3.20');
    const run = async (command: string) => {
      const result = await executeToEnd(environment.id, command);
      expect(result, command).toMatchObject({ status: 'exited', exitCode: 0 });
      return result.stdout as string;
    };
    // Backyard as this environment reaches it: the address createDevelopmentEnvironment answered.
    const inside = new URL(environment.backyardURL);
    expect(inside.hostname).toBe('backyard.internal');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    const address = `http://x-access-token:${token}@${inside.host}/git/alice/todo-web.git`;
    // Clone with the token, then keep it out of .git/config: origin gets the address without it.
    await run(`git clone -q ${address} /workspace/todo-web && cd /workspace/todo-web && git remote set-url origin ${inside.origin}/git/alice/todo-web.git && ls site`);
    expect(await run('cat /workspace/todo-web/.git/config')).not.toContain(token);
    const config = `window.CONFIG = ${JSON.stringify({ appId: state.app.appId, javascriptKey: state.app.javascriptKey, apiURL: state.app.apiURL, sdk: server.platform.services.urls.sdkScript })};\n`;
    await run(
      `cd /workspace/todo-web && cat > site/config.js <<'END'\n${config}END\n` +
        `git add site/config.js && git -c user.name=Assistant -c user.email=assistant@example.invalid commit -q -m 'Configure the Backend App' && git push -q ${address} HEAD:main && git rev-parse HEAD`,
    );
    state.pushed = (await run('cd /workspace/todo-web && git rev-parse HEAD')).trim();
    expect(await server.platform.services.repoHost.resolveBranch('alice', 'todo-web', 'main')).toBe(state.pushed);
  });

  it('deploys the repository as a Web App, which reads the Backend App\'s ToDos in the browser', async () => {
    expect(await call(client, 'getWebApps', { appName: 'todo-web' })).toEqual({ webApps: [] });
    const created = await call(client, 'createWebApp', { appName: 'todo-web', repositoryOwnerLogin: 'alice', repositoryName: 'todo-web', healthCheckPath: '/index.html' });
    expect(created.status).toBe('deploying');
    const done = await settle(client, created.appId, created.lastDeployment.id, 60_000, 1000);
    expect(done).toMatchObject({ status: 'active', commitSHA: state.pushed });
    const app = await call(client, 'getWebApp', { appId: created.appId });
    expect(app).toMatchObject({ status: 'running', port: 8080, appURL: `http://todo-web.localhost:${new URL(server.url).port}/` });

    const tab = await browser!.newPage();
    try {
      await tab.goto(app.appURL);
      await tab.waitForSelector('body[data-loaded]', { timeout: 15_000 });
      expect(await tab.$$eval('#list li', (items) => items.map((li) => li.textContent))).toEqual(['Write the new home page', 'Choose the hosting']);
      fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
      await tab.screenshot({ path: path.join(ARTIFACTS_DIR, 'mission-web-app.png') });
    } finally {
      await tab.close();
    }
    state.webAppId = created.appId;
  });

  it('follows the web app guide as served: its commands in the environment, and its Dockerfile deployed', async () => {
    const { content } = await call(client, 'getGuide', { guideTitle: 'deploy-a-web-app-from-the-built-in-git-host' });
    const step = (n: number) => {
      const text = content.split(/\n(?=\d+\. )/).find((s: string) => s.startsWith(`${n}. `))!;
      return JSON.parse(/```json\n([\s\S]*?)\n```/.exec(text)![1]!) as Record<string, any>;
    };
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    const fill = (text: string) => text.replaceAll('<token from step 7>', token).replaceAll('<login>', 'alice');
    for (const n of [3, 4, 5, 8]) {
      const { command } = step(n);
      const result = await executeToEnd(state.environmentId, fill(command));
      expect(result, `step ${n}: ${command}: ${JSON.stringify(result)}`).toMatchObject({ status: 'exited', exitCode: 0 });
    }
    const dockerfile = (await call(client, 'executeCommand', { developmentEnvironmentId: state.environmentId, command: 'head -n 1 /workspace/hello-web/Dockerfile' })).stdout;
    expect(dockerfile).toBe(`FROM ${DEBIAN_IMAGE}\n`);

    const args = step(9);
    const created = await call(client, 'createWebApp', { ...args, repositoryOwnerLogin: fill(args.repositoryOwnerLogin) });
    const done = await settle(client, created.appId, created.lastDeployment.id, 120_000, 1000);
    expect(done.status, JSON.stringify(done)).toBe('active');
    const page = await fetchApp(created.appURL);
    expect(page).toMatchObject({ status: 200, text: 'Hello from the Backyard team\n' });
    state.guideWebAppId = created.appId;
  }, 180_000);

  it('deletes everything it made with the lifecycle tools, and nothing is left', async () => {
    const home = server.home;
    await call(client, 'deleteWebApp', { appId: state.webAppId });
    if (state.guideWebAppId) await call(client, 'deleteWebApp', { appId: state.guideWebAppId });
    await call(client, 'deleteDevelopmentEnvironment', { developmentEnvironmentId: state.environmentId });
    await call(client, 'deleteBackendApp', { appId: state.app.appId });
    expect(await call(client, 'getWebApps', {})).toEqual({ webApps: [] });
    expect(await call(client, 'getDevelopmentEnvironments', {})).toEqual({ developmentEnvironments: [] });
    expect(await call(client, 'getBackendApps', {})).toEqual({ backendApps: [] });
    expect(await docker.listContainers({ all: true, filters: webAppHomeFilter(home) })).toEqual([]);
    expect(await docker.listContainers({ all: true, filters: homeFilter(home) })).toEqual([]);
    expect((await docker.listVolumes({ filters: homeFilter(home) })).Volumes ?? []).toEqual([]);
    expect(await docker.listImages({ filters: imageFilter(home) })).toEqual([]);
    expect(fs.existsSync(path.join(home, 'apps', state.app.appId))).toBe(false);
    expect((await fetchApp(`http://todo-web.localhost:${new URL(server.url).port}/`)).status).toBe(404);
  });
});

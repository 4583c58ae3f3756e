/**
 * Progress and cancellation: calls that carry a progressToken hear what long operations
 * do, through the v2 client (revision 2026-07-28) and the legacy client (2025-11-25) over HTTP,
 * against a real Docker engine; a cancelled call answers what is known and leaves the work going.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVENV_ENV, SKIP_DOCKER, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { WEBAPP_ENV, commit, push, removeWebApps, sampleApp } from './helpers/webapps.js';

interface Progress {
  progress: number;
  message?: string;
}

/** What the tests need of a client: a tool call that may follow progress and be cancelled. */
interface ProgressClient {
  call(name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void, signal?: AbortSignal): Promise<Record<string, any>>;
  close(): Promise<void>;
}

const info = { name: 'backyard-progress-tests', version: '1.0.0' };

async function modern(url: string, token: string): Promise<ProgressClient> {
  const client = new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernHttp(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return {
    call: (name, args, onprogress, signal) => client.callTool({ name, arguments: args }, { onprogress, signal, timeout: 120_000, resetTimeoutOnProgress: true }) as Promise<Record<string, any>>,
    close: () => client.close(),
  };
}

async function legacy(url: string, token: string): Promise<ProgressClient> {
  const client = new LegacyClient(info);
  await client.connect(new LegacyHttp(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return {
    call: (name, args, onprogress, signal) => client.callTool({ name, arguments: args }, undefined, { onprogress, signal, timeout: 120_000, resetTimeoutOnProgress: true }) as Promise<Record<string, any>>,
    close: () => client.close(),
  };
}

const structured = (result: Record<string, any>) => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  return result.structuredContent as Record<string, any>;
};

describe.skipIf(SKIP_DOCKER)('progress notifications', () => {
  let server: TestServer;
  let work: string;

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer({ ...DEVENV_ENV, ...WEBAPP_ENV, BACKYARD_EXEC_WAIT_MS: '8000' });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-progress-'));
  });
  afterAll(async () => {
    if (server) {
      await server.close();
      await removeDevenvs(server.home);
      await removeWebApps(server.home);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  describe.each([
    ['v2 client (2026-07-28)', modern],
    ['legacy client (2025-11-25)', legacy],
  ])('through the %s', (label, connect) => {
    let client: ProgressClient;
    const slug = label.startsWith('v2') ? 'modern' : 'legacy';
    beforeAll(async () => {
      client = await connect(server.url, server.alice);
    });
    afterAll(async () => client?.close());

    it('createDevelopmentEnvironment says what it prepares; deployCloudCode that it reloads', async () => {
      const heard: Progress[] = [];
      structured(await client.call('createDevelopmentEnvironment', { chatTitle: `prepared ${slug}` }, (p) => heard.push(p)));
      expect(heard.map((p) => p.message)).toEqual([
        expect.stringMatching(/^Getting the image \(.+\) and starting the container\.$/),
        expect.stringMatching(/^The container runs .+; letting it reach Backyard at backyard\.internal\.$/),
      ]);
      const app = structured(await client.call('createBackendApp', { appName: `progress-${slug}` }));
      const deployed: Progress[] = [];
      const changes = [{ path: 'cloud/main.js', operation: 'write', writeMode: 'overwrite', data: "Parse.Cloud.define('hi', () => 'hi');\n" }];
      const result = structured(await client.call('deployCloudCode', { appId: app.appId, changes }, (p) => deployed.push(p)));
      expect(result.message).toMatch(/reloaded/);
      expect(deployed.map((p) => p.message)).toEqual(['Saved 1 change; reloading the cloud code.']);
    });

    it('executeCommand reports the start and the output while it waits', async () => {
      const environment = structured(await client.call('createDevelopmentEnvironment', { chatTitle: `progress ${slug}` }));
      const heard: Progress[] = [];
      // Each line appears only after the previous one was reported, so progress is seen mid-run (no sleep decides it).
      const command = 'echo first; while [ ! -f /workspace/go ]; do sleep 0.2; done; echo second';
      const running = client.call('executeCommand', { developmentEnvironmentId: environment.id, command }, (p) => {
        heard.push(p);
      });
      const release = structured(
        await waitFor(() => heard.some((p) => p.message?.includes('ends with: first')), () =>
          client.call('executeCommand', { developmentEnvironmentId: environment.id, command: 'touch /workspace/go' }),
        ),
      );
      expect(release.exitCode).toBe(0);
      const done = structured(await running);
      expect(done).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'first\nsecond\n' });
      expect(heard[0]!.message).toBe(`Started sh -c ${JSON.stringify(command)}.`);
      expect(heard.map((p) => p.progress)).toEqual(heard.map((_, i) => i + 1));
    });

    it('createWebApp and startDeployment with a token follow the deployment to its end; a cancelled one stops waiting, not deploying', async () => {
      const repo = path.join(work, slug);
      await commit(repo, sampleApp(`<h1>${slug}</h1>\n`), 'first');
      const token = structured(await client.call('createRepohostInstallationAccessToken', {})).token as string;
      await push(server.url, repo, 'alice', `progress-${slug}`, token);

      const created: Progress[] = [];
      const app = structured(
        await client.call('createWebApp', { appName: `progress-${slug}`, repositoryOwnerLogin: 'alice', repositoryName: `progress-${slug}` }, (p) => {
          created.push(p);
        }),
      );
      expect(app.status).toBe('running');
      expect(app.lastDeployment.status).toBe('active');
      const messages = created.map((p) => p.message ?? '');
      expect(messages).toContain('Deployment active.');
      expect(messages.some((m) => /^Build: Step 1\/\d+ : FROM /.test(m))).toBe(true);
      expect(messages.indexOf('Deployment building.')).toBeLessThan(messages.indexOf('Deployment active.'));

      const again: Progress[] = [];
      const deployment = structured(await client.call('startDeployment', { appId: app.appId }, (p) => again.push(p)));
      expect(deployment.status).toBe('active');
      expect(again.at(-1)!.message).toBe('Deployment active.');

      const appId = app.appId as string;
      const controller = new AbortController();
      const heard: Progress[] = [];
      const call = client.call('startDeployment', { appId }, (p) => {
        heard.push(p);
        if (p.message === 'Deployment queued.' || p.message === 'Deployment building.') controller.abort();
      }, controller.signal);
      await expect(call).rejects.toThrow();
      // The server stopped waiting, not deploying: the deployment still ends active.
      const after = await waitFor(
        async () => {
          const state = structured(await client.call('getWebApp', { appId }));
          return state.lastDeployment.status !== 'queued' && state.lastDeployment.status !== 'building' && state.lastDeployment.status !== 'starting' ? state : undefined;
        },
        async (state) => state,
      );
      expect(after.lastDeployment.status).toBe('active');
      expect(heard.some((p) => p.message === 'Deployment active.')).toBe(false);
    });
  });
});

/**
 * Calls `then` once `until` holds (re-checked on each event-loop turn with a short pause, up to 60 s),
 * with what `until` answered.
 */
async function waitFor<T, R>(until: () => T | Promise<T>, then: (value: NonNullable<Awaited<T>>) => Promise<R>): Promise<R> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await until();
    if (value) return then(value as NonNullable<Awaited<T>>);
    if (Date.now() > deadline) throw new Error('waited 60 s in vain');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

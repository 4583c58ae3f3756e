import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { KEPT_CAPABILITIES, containerSpec } from '../src/platform/devenvs/containers.js';
import { engineFailure, isUnreachable, notReachableText } from '../src/platform/devenvs/engine.js';
import { groupScript, wrappedCommand } from '../src/platform/devenvs/executions.js';
import { LABEL_ACCOUNT, LABEL_ENVIRONMENT, LABEL_HOME, accountNetworkName } from '../src/platform/devenvs/labels.js';
import { isNetworkFault } from '../src/platform/devenvs/networks.js';
import { PER_ACCOUNT } from '../src/settings.js';
import { BUSYBOX_PATH, isStaticElf, offlineRootTar } from '../src/platform/devenvs/offlineImage.js';
import { TailBuffer, completeUtf8Length, cutMarker } from '../src/platform/devenvs/output.js';
import { ManagementError } from '../src/errors.js';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../src/log.js';
import { openPlatform, type Platform } from '../src/platform/platform.js';
import { STALE_MS, newOwner, ownerGone } from '../src/platform/devenvs/owners.js';
import { tarEntries } from './helpers/tarEntries.js';
import { START_HEADROOM_TASKS, startFailureText } from '../src/platform/devenvs/startFailure.js';
import { refusalOf, rejectionOf } from './helpers/refusal.js';

/** Parts of development environments that need no Docker engine. */
describe('output tails (1 MiB per stream)', () => {
  it('keeps everything under the limit, without a marker', () => {
    const t = new TailBuffer(10);
    t.append(Buffer.from('hello '));
    t.append(Buffer.from('you'));
    expect(t.render()).toBe('hello you');
    expect(t.dropped).toBe(0);
  });

  it('keeps the last bytes and counts what it dropped, across chunk boundaries', () => {
    const t = new TailBuffer(10);
    for (const part of ['0123456789', 'abc', 'defghijklmnop']) t.append(Buffer.from(part));
    expect(t.render()).toBe(cutMarker(16) + 'ghijklmnop');
    expect(t.total).toBe(26);
    const big = new TailBuffer(4);
    big.append(Buffer.from('0123456789'));
    expect(big.render()).toBe(cutMarker(6) + '6789');
  });

  it('never splits a UTF-8 character: a cut one is dropped, an incomplete last one waits', () => {
    const t = new TailBuffer(4);
    t.append(Buffer.from('aé€')); // 1 + 2 + 3 bytes: the cut falls inside é
    expect(t.render()).toBe(cutMarker(3) + '€');
    const open = new TailBuffer(100);
    const euro = Buffer.from('€');
    open.append(Buffer.concat([Buffer.from('x'), euro.subarray(0, 2)]));
    expect(open.render()).toBe('x');
    expect(open.render(true)).toBe('x\uFFFD');
    open.append(euro.subarray(2));
    expect(open.render()).toBe('x€');
    expect(completeUtf8Length(Buffer.from('ab'))).toBe(2);
    expect(completeUtf8Length(Buffer.from([0x61, 0xf0, 0x9f, 0x98]))).toBe(1);
  });
});

describe('the text of a command that could not start', () => {
  const runtimeMessage = 'OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer: unknown';

  it('names the full process table, the running executions to end and the runtime\'s words', () => {
    const text = startFailureText({ runtimeMessage, tasks: 64, limit: 64, running: ['abc', 'def'] });
    expect(text).toMatch(/^The command could not start, so it never ran: the development environment has no process slots left \(64 of 64 in use/);
    expect(text).toContain('running now: abc, def');
    expect(text).toContain('restartDevelopmentEnvironment');
    expect(text).toContain(runtimeMessage);
  });

  it('says what holds the slots when no execution runs', () => {
    const text = startFailureText({ runtimeMessage, tasks: 64 - START_HEADROOM_TASKS + 1, limit: 64, running: [] });
    expect(text).toMatch(/no process slots left/);
    expect(text).toMatch(/left in the background hold the slots/);
    expect(text).toContain('Call restartDevelopmentEnvironment to free them');
    expect(text).not.toMatch(/ask the person/);
  });

  it('gives the runtime\'s words alone when slots are free or could not be counted', () => {
    for (const tasks of [64 - START_HEADROOM_TASKS, undefined]) {
      const text = startFailureText({ runtimeMessage, tasks, limit: 64, running: ['abc'] });
      expect(text).not.toMatch(/process slots/);
      expect(text).toContain(`The container runtime said: ${runtimeMessage}`);
    }
  });
});

describe('configuration of development environments', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({ home: '/tmp/x' }, {});
    expect(c).toMatchObject({
      devenvImage: 'alpine:3.20',
      execWaitMs: 15000,
      devenvMemoryMb: 1024,
      devenvCpus: 1,
      devenvPids: 512,
      devenvNetwork: PER_ACCOUNT,
      dockerHost: undefined,
    });
  });

  it('reads the variables and names a bad one', () => {
    const c = loadConfig({ home: '/tmp/x' }, { BACKYARD_DEVENV_IMAGE: 'backyard/devenv:offline', BACKYARD_EXEC_WAIT_MS: '500', BACKYARD_DEVENV_CPUS: '0.5', DOCKER_HOST: 'tcp://127.0.0.1:2375' });
    expect(c).toMatchObject({ devenvImage: 'backyard/devenv:offline', execWaitMs: 500, devenvCpus: 0.5, dockerHost: 'tcp://127.0.0.1:2375' });
    expect(() => loadConfig({ home: '/tmp/x' }, { BACKYARD_DEVENV_NETWORK: 'host' })).toThrow(/BACKYARD_DEVENV_NETWORK must not share the host/);
    expect(loadConfig({ home: '/tmp/x' }, { BACKYARD_DEVENV_NETWORK: 'bridge' }).devenvNetwork).toBe('bridge');
    expect(loadConfig({ home: '/tmp/x' }, { BACKYARD_DEVENV_NETWORK: 'per-account' }).devenvNetwork).toBe(PER_ACCOUNT);
    expect(() => loadConfig({ home: '/tmp/x' }, { BACKYARD_DEVENV_NETWORK: 'Per_Account' })).toThrow(/BACKYARD_DEVENV_NETWORK must be written per-account/);
    expect(() => loadConfig({ home: '/tmp/x' }, { BACKYARD_DEVENV_NETWORK: 'my net' })).toThrow(/BACKYARD_DEVENV_NETWORK must be per-account \(each account's containers on a network of their own\) or a Docker network name/);
    expect(() => loadConfig({ home: '/tmp/x' }, { BACKYARD_EXEC_WAIT_MS: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ home: '/tmp/x' }, { DOCKER_HOST: '/var/run/docker.sock' })).toThrow(/DOCKER_HOST must be like/);
  });
});

describe('container and exec specifications', () => {
  const settings = { home: '/h', dockerHost: undefined, image: 'img', memoryMb: 64, cpus: 0.5, pids: 100, network: 'none' };

  it('creates an unprivileged, labelled, limited container with only a named volume', () => {
    const spec = containerSpec(settings, 'acc', 'env1', 'none');
    expect(spec.Labels).toMatchObject({ [LABEL_ACCOUNT]: 'acc', [LABEL_ENVIRONMENT]: 'env1', [LABEL_HOME]: '/h' });
    expect(spec.HostConfig).toMatchObject({
      Init: true,
      Privileged: false,
      CapDrop: ['ALL'],
      CapAdd: [...KEPT_CAPABILITIES],
      SecurityOpt: ['no-new-privileges'],
      Memory: 64 * 1024 * 1024,
      MemorySwap: 64 * 1024 * 1024,
      NanoCpus: 5e8,
      PidsLimit: 100,
      NetworkMode: 'none',
      Mounts: [{ Type: 'volume', Source: 'backyard-devenv-env1-workspace', Target: '/workspace' }],
    });
    expect(spec.HostConfig?.Binds).toBeUndefined();
  });

  it('names each account\'s network after its home and account, and knows the engine\'s network faults', () => {
    expect(accountNetworkName('/h', 'acc')).toMatch(/^backyard-[0-9a-f]{12}$/);
    expect(accountNetworkName('/h', 'acc')).toBe(accountNetworkName('/h', 'acc'));
    expect(new Set([accountNetworkName('/h', 'acc'), accountNetworkName('/h', 'other'), accountNetworkName('/other', 'acc')]).size).toBe(3);
    const refusal = (message: string) => Object.assign(new Error(`(HTTP code 404) ${message}`), { statusCode: 404, json: { message } });
    expect(isNetworkFault(refusal('network backyard-0123456789ab not found'))).toBe(true);
    expect(isNetworkFault(refusal('network backyard-0123456789ab is ambiguous (2 matches found based on name)'))).toBe(true);
    expect(isNetworkFault(refusal('No such container: abc'))).toBe(false);
  });

  it('runs the command as sh -c <command>, passed as an argument, never pasted into a script', () => {
    const argv = wrappedCommand('echo "$1"; it\'s');
    expect(argv.at(-1)).toBe('echo "$1"; it\'s');
    expect(argv[2]).toMatch(/exec sh -c "\$1"$/);
    expect(groupScript('abc', 'TERM')).toContain('kill -TERM -"$p"');
    expect(groupScript('abc', 'alive')).toContain('kill -0 -"$p"');
  });
});

describe('engine errors', () => {
  it('turns an unreachable engine into a 500 text that says how to start one', () => {
    const error = Object.assign(new Error('connect ENOENT /x.sock'), { code: 'ENOENT' });
    expect(isUnreachable(error)).toBe(true);
    const mapped = engineFailure(error, 'do it', 'unix:///x.sock') as ManagementError;
    expect(mapped).toBeInstanceOf(ManagementError);
    expect(mapped.kind).toBe('unavailable');
    expect(mapped.message).toBe(notReachableText('unix:///x.sock', error));
    expect(mapped.message).toMatch(/^Docker is not reachable at unix:\/\/\/x.sock \(ENOENT\).*Start the Docker engine/);
  });

  it('names what the engine refused and why', () => {
    const refused = Object.assign(new Error('HTTP 409'), { statusCode: 409, json: { message: 'Container abc is not running' } });
    expect((engineFailure(refused, 'start the command', undefined) as Error).message).toMatch(
      /^The Docker engine could not start the command: Container abc is not running\./,
    );
  });
});

describe('the offline image', () => {
  it('tells a static program from a dynamic one', () => {
    expect(isStaticElf(process.execPath)).toBe(false);
    if (fs.existsSync(BUSYBOX_PATH) && spawnSync('ldd', [BUSYBOX_PATH]).status !== 0) expect(isStaticElf(BUSYBOX_PATH)).toBe(true);
  });

  it('packs busybox, its applet links, /bin/sh, /tmp (1777) and /workspace', async () => {
    const pack = offlineRootTar(Buffer.from('#!fake'), ['bin/ls', 'usr/bin/wget', 'sbin/ip']);
    const entries = await tarEntries(pack);
    expect(entries.get('bin/busybox')).toMatchObject({ type: 'file', mode: 0o755 });
    for (const link of ['bin/sh', 'bin/ls', 'usr/bin/wget', 'sbin/ip']) expect(entries.get(link)).toMatchObject({ type: 'symlink', linkname: '/bin/busybox' });
    expect(entries.get('tmp/')).toMatchObject({ type: 'directory', mode: 0o1777 });
    expect(entries.get('workspace/')).toMatchObject({ type: 'directory' });
    expect(entries.has('etc/passwd')).toBe(true);
  });
});

describe('owners of running executions', () => {
  const now = Date.now();
  const fresh = new Date(now).toISOString();
  const old = new Date(now - STALE_MS - 1).toISOString();

  it('are gone when it is this service, this process, or a process of this host that exited', () => {
    const me = newOwner();
    expect(ownerGone(me, fresh, me, now)).toBe(true);
    expect(ownerGone(`${os.hostname()}/${process.pid}/earlier`, fresh, me, now)).toBe(true);
    expect(ownerGone(`${os.hostname()}/999999999/x`, fresh, me, now)).toBe(true);
  });

  it('are alive while their process runs or another host keeps the heartbeat fresh', () => {
    const me = newOwner();
    expect(ownerGone(`${os.hostname()}/${process.ppid}/x`, fresh, me, now)).toBe(false);
    expect(ownerGone('elsewhere/1/x', fresh, me, now)).toBe(false);
    expect(ownerGone('elsewhere/1/x', old, me, now)).toBe(true);
  });
});

describe('the listing of an environment\'s executions (the dashboard\'s reads)', () => {
  /**
   * A platform on a temporary home with an environment of alice's holding the executions given,
   * written as the service writes them (no Docker: nothing here starts a container).
   */
  async function withExecutions(
    rows: Array<{ id: string; createdAt: string; status?: 'running' | 'exited'; exitCode?: number }>,
    test: (p: { platform: Platform; alice: string; bob: string; environmentId: string }) => Promise<void>,
  ): Promise<void> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-executions-'));
    const platform = await openPlatform(loadConfig({ home }, { BACKYARD_LOG_LEVEL: 'silent' }), createLogger('silent'));
    try {
      const alice = (await platform.services.accounts.create('alice')).account.id;
      const bob = (await platform.services.accounts.create('bob')).account.id;
      const environmentId = 'EnvListing00000000001';
      await platform.db.run('INSERT INTO development_environments (id, account_id, chat_title, created_at) VALUES (?, ?, ?, ?)', environmentId, alice, 'Alice chat', '2026-01-01T00:00:00.000Z');
      const insert = `INSERT INTO command_executions (id, environment_id, command, status, exit_code, owner, heartbeat_at, created_at, exited_at)
         VALUES (?, ?, ?, ?, ?, 'elsewhere/1/x', ?, ?, ?)`;
      for (const r of rows) {
        const exited = (r.status ?? 'exited') === 'exited';
        const heartbeat = new Date().toISOString(); // fresh: the running ones stay running
        await platform.db.run(insert, r.id, environmentId, `echo ${r.id}`, exited ? 'exited' : 'running', exited ? (r.exitCode ?? 0) : null, heartbeat, r.createdAt, exited ? r.createdAt : null);
      }
      await test({ platform, alice, bob, environmentId });
    } finally {
      await platform.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  }


  it('lists newest first, the later insert first within one millisecond, at most `limit`, without output', async () => {
    const rows = [
      { id: 'a', createdAt: '2026-01-01T00:00:01.000Z' },
      { id: 'c', createdAt: '2026-01-01T00:00:03.000Z', status: 'running' as const },
      { id: 'b1', createdAt: '2026-01-01T00:00:02.000Z', exitCode: 2 },
      { id: 'b2', createdAt: '2026-01-01T00:00:02.000Z' },
    ];
    await withExecutions(rows, async ({ platform, alice, environmentId }) => {
      const devenvs = platform.services.devenvs;
      expect((await devenvs.executions(alice, environmentId)).map((e) => e.id)).toEqual(['c', 'b2', 'b1', 'a']);
      expect(await devenvs.executions(alice, environmentId, 2)).toEqual([
        { id: 'c', command: 'echo c', status: 'running', exitCode: null, createdAt: '2026-01-01T00:00:03.000Z', exitedAt: null },
        { id: 'b2', command: 'echo b2', status: 'exited', exitCode: 0, createdAt: '2026-01-01T00:00:02.000Z', exitedAt: '2026-01-01T00:00:02.000Z' },
      ]);
      expect(await devenvs.executionSummary(alice, environmentId, 'b1')).toMatchObject({ id: 'b1', status: 'exited', exitCode: 2 });
      expect((await rejectionOf(() => devenvs.executionSummary(alice, environmentId, 'nope'))).kind).toBe('notFound');
      expect((await rejectionOf(() => devenvs.executions(alice, environmentId, 0))).kind).toBe('invalid');
      expect((await rejectionOf(() => devenvs.executions(alice, environmentId, -1))).kind).toBe('invalid');
    });
  });

  it('counts all executions and the running ones, with the latest; none for an environment without any', async () => {
    await withExecutions(
      [
        { id: 'x', createdAt: '2026-01-01T00:00:01.000Z', status: 'running' },
        { id: 'y', createdAt: '2026-01-01T00:00:02.000Z', exitCode: 1 },
        { id: 'z', createdAt: '2026-01-01T00:00:03.000Z', status: 'running' },
      ],
      async ({ platform, alice, environmentId }) => {
        const activity = await platform.services.devenvs.activity(alice, environmentId);
        expect(activity).toMatchObject({ total: 3, running: 2, latest: { id: 'z', status: 'running' } });
      },
    );
    await withExecutions([], async ({ platform, alice, environmentId }) => {
      expect(await platform.services.devenvs.activity(alice, environmentId)).toEqual({ total: 0, running: 0 });
      expect(await platform.services.devenvs.executions(alice, environmentId)).toEqual([]);
    });
  });

  it('refuses another account\'s environment as unknown (notFound), like the other operations', async () => {
    await withExecutions([{ id: 'a', createdAt: '2026-01-01T00:00:01.000Z' }], async ({ platform, alice, bob, environmentId }) => {
      const devenvs = platform.services.devenvs;
      const refusals = [
        (await rejectionOf(() => devenvs.executions(bob, environmentId))),
        (await rejectionOf(() => devenvs.activity(bob, environmentId))),
        (await rejectionOf(() => devenvs.executionSummary(bob, environmentId, 'a'))),
        (await rejectionOf(() => devenvs.executions(alice, 'NoSuchEnvironment'))),
      ];
      for (const refusal of refusals) expect(refusal.kind).toBe('notFound');
      // The same text as for an unknown id: nothing tells bob that the environment exists.
      expect(refusals[0]!.message).toBe((await rejectionOf(() => devenvs.executions(bob, 'NoSuchEnvironment'))).message.replace('NoSuchEnvironment', environmentId));
    });
  });
});

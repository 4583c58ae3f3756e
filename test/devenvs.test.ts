import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_ACCOUNT, LABEL_ENVIRONMENT } from '../src/platform/devenvs/labels.js';
import { OUTPUT_LIMIT_BYTES } from '../src/platform/devenvs/output.js';
import { DEBIAN_IMAGE } from '../src/platform/devenvs/debianImage.js';
import { BUSYBOX_OS, OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { DEVENV_ENV, SKIP_DOCKER, containersOf, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { legacyHttpClient, modernHttpClient, type AnyMcpClient } from './helpers/mcpClients.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';

/** What the tools answer, as structuredContent; a failure throws with the tool's text. */
async function call(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return result.structuredContent as Record<string, any>;
}

/** The text of a tool's error answer. */
async function failure(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  return result.content[0].text as string;
}

describe.skipIf(SKIP_DOCKER)('development environments through MCP (real Docker engine)', () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let envId: string;
  const run = (command: string) => call(client, 'executeCommand', { developmentEnvironmentId: envId, command });
  const interact = (commandExecutionId: string, args: Record<string, unknown>) =>
    call(client, 'interactWithCommandExecution', { developmentEnvironmentId: envId, commandExecutionId, ...args });
  const inspect = (commandExecutionId: string) =>
    call(client, 'inspectCommandExecution', { developmentEnvironmentId: envId, commandExecutionId });

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer(DEVENV_ENV);
    client = await modernHttpClient(server.url, server.alice);
    envId = (await call(client, 'createDevelopmentEnvironment', { chatTitle: 'Set up a Node project' })).id;
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    if (server) await removeDevenvs(server.home);
  });

  it('lists the five development environment tools', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of ['createDevelopmentEnvironment', 'getDevelopmentEnvironments', 'executeCommand', 'interactWithCommandExecution', 'inspectCommandExecution']) {
      expect(names).toContain(name);
    }
  });

  it('creates an environment: id, chatTitle, createdAt, the image and its (absent) install command, and a labelled container', async () => {
    const created = await call(client, 'createDevelopmentEnvironment', { chatTitle: 'Another chat' });
    expect(created).toEqual({
      id: expect.any(String),
      chatTitle: 'Another chat',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      backyardURL: `http://backyard.internal:${new URL(server.url).port}`,
      // BusyBox: no package manager, so no installCommand.
      image: OFFLINE_IMAGE,
      operatingSystem: BUSYBOX_OS,
    });
    const [container] = await containersOf(created.id);
    expect(container?.Image).toBe(OFFLINE_IMAGE);
    expect(container?.State).toBe('running');
    expect(container?.Labels[LABEL_ENVIRONMENT]).toBe(created.id);
    expect(container?.Labels[LABEL_ACCOUNT]).toBe((await server.platform.services.accounts.findByLogin('alice'))!.id);
  });

  it('reaches Backyard from inside at backyardURL, although Backyard listens on loopback', async () => {
    const { backyardURL } = (await call(client, 'getDevelopmentEnvironments', { chatTitle: 'Set up a Node project' })).developmentEnvironments[0];
    const { hostname, port } = new URL(backyardURL);
    // BusyBox wget crashes in this image; a bare HTTP request through nc.
    const answer = await run(`printf 'GET /healthz HTTP/1.0\\r\\nHost: ${hostname}\\r\\n\\r\\n' | nc ${hostname} ${port}`);
    expect(answer.stdout).toMatch(/^HTTP\/1\.1 200/);
    const health = (await (await fetch(`${server.url}/healthz`)).json()) as { instanceId: string };
    expect(answer.stdout).toContain(health.instanceId);
  });

  it('lists the account\'s environments, filtered exactly by chatTitle', async () => {
    const all = (await call(client, 'getDevelopmentEnvironments', {})).developmentEnvironments;
    expect(all.map((e: { chatTitle: string }) => e.chatTitle)).toEqual(expect.arrayContaining(['Set up a Node project', 'Another chat']));
    const one = (await call(client, 'getDevelopmentEnvironments', { chatTitle: 'Set up a Node project' })).developmentEnvironments;
    expect(one).toEqual([expect.objectContaining({ id: envId, chatTitle: 'Set up a Node project' })]);
    expect((await call(client, 'getDevelopmentEnvironments', { chatTitle: 'Set up a Node' })).developmentEnvironments).toEqual([]);
  });

  it('runs echo hi: exited, exit code 0, stdout "hi\\n"', async () => {
    expect(await run('echo hi')).toEqual({ id: expect.any(String), stdout: 'hi\n', stderr: '', status: 'exited', exitCode: 0 });
  });

  it('reports a non-zero exit code', async () => {
    expect(await run('exit 3')).toMatchObject({ status: 'exited', exitCode: 3 });
  });

  it('keeps stderr apart from stdout', async () => {
    expect(await run('echo out; echo oops >&2; exit 1')).toMatchObject({ stdout: 'out\n', stderr: 'oops\n', status: 'exited', exitCode: 1 });
  });

  it('runs in /workspace, as sh -c, with each command in a shell of its own', async () => {
    expect((await run('pwd')).stdout).toBe('/workspace\n');
    await run('cd /tmp && export X=1');
    expect((await run('pwd; echo "[$X]"')).stdout).toBe('/workspace\n[]\n');
  });

  it('answers a command that reads stdin with interactWithCommandExecution, adding the newline', async () => {
    const started = await run('read x; echo got $x');
    expect(started).toMatchObject({ status: 'running', stdout: '' });
    expect(started.exitCode).toBeUndefined();
    expect(await interact(started.id, { stdin: 'hello' })).toEqual({ id: started.id, stdout: 'got hello\n', stderr: '', status: 'exited', exitCode: 0 });
  });

  it('answers several prompts in turn, waiting for the output to settle', async () => {
    const started = await run('printf "name? "; read a; printf "hi $a. age? "; read b; echo "$a is $b"');
    expect(started.stdout).toBe('name? ');
    const first = await interact(started.id, { stdin: 'ann\n', exit: false });
    expect(first).toMatchObject({ status: 'running', stdout: 'name? hi ann. age? ' });
    expect(await interact(started.id, { stdin: '7' })).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'name? hi ann. age? ann is 7\n' });
  });

  it('answers a long command as running, then ends it with exit: true (SIGTERM)', async () => {
    const started = await run('echo started; sleep 60');
    expect(started).toMatchObject({ status: 'running', stdout: 'started\n' });
    expect(started).not.toHaveProperty('exitCode');
    expect(await inspect(started.id)).toMatchObject({ status: 'running', stdout: 'started\n' });
    const t0 = Date.now();
    const ended = await interact(started.id, { exit: true });
    expect(ended).toMatchObject({ status: 'exited', exitCode: 143, stdout: 'started\n' });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(await inspect(started.id)).toEqual(ended);
    // Nothing of it is left in the container.
    expect((await run('ps')).stdout).not.toContain('sleep 60');
  });

  it('ends a command that ignores SIGTERM with SIGKILL after the grace period', async () => {
    const started = await run('trap "" TERM; echo ready; while true; do sleep 1; done');
    expect(started.stdout).toBe('ready\n');
    const t0 = Date.now();
    const ended = await interact(started.id, { exit: true });
    expect(ended).toMatchObject({ status: 'exited', exitCode: 137 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4000);
  }, 30_000);

  it('keeps the last 1 MiB of 5 MiB of output, with a marker where it was cut', async () => {
    const started = await run('head -c 5242880 /dev/zero | tr "\\0" x; echo; echo THE-END');
    // On a loaded machine 5 MiB may take longer than the call waits: then follow the execution to its end.
    if (started.status === 'running') await expect.poll(async () => (await inspect(started.id)).status, { timeout: 60_000 }).toBe('exited');
    const result = started.status === 'running' ? await inspect(started.id) : started;
    expect(result).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(result.stdout).toMatch(/^\[backyard: \d+ earlier bytes of this stream were cut; only its last 1 MiB is kept\]\n/);
    const kept = result.stdout.slice(result.stdout.indexOf('\n') + 1);
    expect(Buffer.byteLength(kept)).toBe(OUTPUT_LIMIT_BYTES);
    expect(kept.endsWith('x\nTHE-END\n')).toBe(true);
    expect(Number(/(\d+) earlier bytes/.exec(result.stdout)![1]) + OUTPUT_LIMIT_BYTES).toBe(5 * 1024 * 1024 + 9);
  }, 90_000);

  it('runs two commands at once in one environment', async () => {
    const waiting = await run('rm -f /tmp/flag; echo waiting; while [ ! -f /tmp/flag ]; do sleep 0.1; done; echo released');
    expect(waiting).toMatchObject({ status: 'running', stdout: 'waiting\n' });
    expect(await run('touch /tmp/flag')).toMatchObject({ status: 'exited', exitCode: 0 });
    await expect.poll(async () => (await inspect(waiting.id)).status, { timeout: 5000 }).toBe('exited');
    expect(await inspect(waiting.id)).toMatchObject({ stdout: 'waiting\nreleased\n', exitCode: 0 });
    const [a, b] = await Promise.all([run('sleep 1; echo a'), run('sleep 1; echo b')]);
    expect([a.stdout, b.stdout]).toEqual(['a\n', 'b\n']);
  });

  it('streams the output of a running command into platform.db', async () => {
    const started = await run('echo first; sleep 1; echo second; sleep 30');
    expect(started.stdout).toBe('first\nsecond\n');
    const row = (await server.platform.db.get('SELECT status, stdout FROM command_executions WHERE id = ?', started.id));
    expect(row).toEqual({ status: 'running', stdout: 'first\nsecond\n' });
    await interact(started.id, { exit: true });
    expect((await server.platform.db.get('SELECT status, exit_code FROM command_executions WHERE id = ?', started.id))).toEqual({ status: 'exited', exit_code: 143 });
  });

  it('starts a stopped container again and recreates a removed one on the same /workspace volume', async () => {
    await run('echo kept > /workspace/note.txt');
    const [container] = await containersOf(envId);
    await docker.getContainer(container!.Id).stop({ t: 0 });
    expect((await run('cat /workspace/note.txt')).stdout).toBe('kept\n');
    await docker.getContainer(container!.Id).remove({ force: true });
    expect((await run('cat /workspace/note.txt')).stdout).toBe('kept\n');
    const [again] = await containersOf(envId);
    expect(again!.Id).not.toBe(container!.Id);
  });

  describe('bad input', () => {
    it('refuses a missing or empty command (400)', async () => {
      expect(await failure(client, 'executeCommand', { developmentEnvironmentId: envId })).toMatch(/command is required/);
      expect(await failure(client, 'executeCommand', { developmentEnvironmentId: envId, command: '' })).toMatch(/command must not be empty/);
      const rest = await api(server, 'POST', `/development-environments/${envId}/commands-executions`, { token: server.alice, body: {} });
      expect(rest.status).toBe(400);
      expect(rest.text).toMatch(/command is required/);
    });

    it('answers 404 for unknown environment and execution ids', async () => {
      expect(await failure(client, 'executeCommand', { developmentEnvironmentId: 'nope', command: 'true' })).toMatch(/No development environment has the id "nope"/);
      expect(await failure(client, 'inspectCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: 'nope' })).toMatch(
        /No command execution has the id "nope"/,
      );
      const base = `/development-environments/${envId}/commands-executions`;
      expect((await api(server, 'POST', '/development-environments/nope/commands-executions', { token: server.alice, body: { command: 'true' } })).status).toBe(404);
      expect((await api(server, 'GET', `${base}/nope`, { token: server.alice })).status).toBe(404);
      expect((await api(server, 'POST', `${base}/nope`, { token: server.alice, body: { exit: true } })).status).toBe(404);
    });

    it('treats another account\'s environment and executions as unknown (404)', async () => {
      const mine = await run('echo mine');
      const bob = await modernHttpClient(server.url, server.bob);
      try {
        expect((await call(bob, 'getDevelopmentEnvironments', {})).developmentEnvironments).toEqual([]);
        expect(await failure(bob, 'executeCommand', { developmentEnvironmentId: envId, command: 'echo intruder' })).toMatch(/No development environment/);
        expect(await failure(bob, 'inspectCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: mine.id })).toMatch(/No development environment/);
      } finally {
        await bob.close();
      }
      const rest = await api(server, 'GET', `/development-environments/${envId}/commands-executions/${mine.id}`, { token: server.bob });
      expect(rest.status).toBe(404);
      // An execution id under another of alice's environments is unknown there too.
      const other = (await call(client, 'getDevelopmentEnvironments', { chatTitle: 'Another chat' })).developmentEnvironments[0].id;
      expect(await failure(client, 'inspectCommandExecution', { developmentEnvironmentId: other, commandExecutionId: mine.id })).toMatch(/No command execution/);
    });

    it('refuses stdin or exit for an execution that has already exited (400)', async () => {
      const done = await run('echo done');
      expect(await failure(client, 'interactWithCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: done.id, stdin: 'x' })).toMatch(
        /has already exited \(exit code 0\).*inspectCommandExecution/,
      );
      const rest = await api(server, 'POST', `/development-environments/${envId}/commands-executions/${done.id}`, { token: server.alice, body: { exit: true } });
      expect(rest.status).toBe(400);
    });

    it('refuses a missing, empty, blank or too long chatTitle (400)', async () => {
      expect(await failure(client, 'createDevelopmentEnvironment', {})).toMatch(/chatTitle is required/);
      expect(await failure(client, 'createDevelopmentEnvironment', { chatTitle: '' })).toMatch(/chatTitle must not be empty/);
      expect(await failure(client, 'createDevelopmentEnvironment', { chatTitle: '   ' })).toMatch(/blank/);
      expect(await failure(client, 'createDevelopmentEnvironment', { chatTitle: 'x'.repeat(201) })).toMatch(/at most 200 characters/);
      expect(await failure(client, 'createDevelopmentEnvironment', { chatTitle: 42 })).toMatch(/chatTitle must be a string/);
      expect((await api(server, 'POST', '/development-environments', { token: server.alice, body: { chatTitle: '' } })).status).toBe(400);
      const ok = await call(client, 'createDevelopmentEnvironment', { chatTitle: 'y'.repeat(200) });
      expect(ok.chatTitle).toHaveLength(200);
    });
  });

  it('answers the REST statuses of the spec: 201, 200, 201, 200, 200', async () => {
    const created = await api(server, 'POST', '/development-environments', { token: server.alice, body: { chatTitle: 'REST' } });
    expect(created.status).toBe(201);
    const id = (created.json() as { id: string }).id;
    const listed = await api(server, 'GET', '/development-environments?chat-title=REST', { token: server.alice });
    expect(listed.status).toBe(200);
    // The list gives the environment without what runs it (createDevelopmentEnvironment's answer alone says that).
    const { image: _image, operatingSystem: _os, installCommand: _install, ...environment } = created.json() as Record<string, unknown>;
    expect(listed.json()).toEqual([environment]);
    const slept = await api(server, 'POST', `/development-environments/${id}/commands-executions`, { token: server.alice, body: { command: 'sleep 1; echo slept' } });
    expect(slept.status).toBe(201);
    expect(slept.json()).toMatchObject({ stdout: 'slept\n', status: 'exited', exitCode: 0 });
    const executed = await api(server, 'POST', `/development-environments/${id}/commands-executions`, { token: server.alice, body: { command: 'read x; echo $x' } });
    expect(executed.status).toBe(201);
    const execId = (executed.json() as { id: string }).id;
    const answered = await api(server, 'POST', `/development-environments/${id}/commands-executions/${execId}`, { token: server.alice, body: { stdin: 'rest\n' } });
    expect(answered.status).toBe(200);
    expect(answered.json()).toMatchObject({ stdout: 'rest\n', status: 'exited', exitCode: 0 });
    expect((await api(server, 'GET', `/development-environments/${id}/commands-executions/${execId}`, { token: server.alice })).status).toBe(200);
  });

  it('works the same through the legacy (1.x) MCP client', async () => {
    const legacy = await legacyHttpClient(server.url, server.alice);
    try {
      const result = await legacy.callTool({ name: 'executeCommand', arguments: { developmentEnvironmentId: envId, command: 'echo legacy' } });
      expect(result.structuredContent).toMatchObject({ stdout: 'legacy\n', status: 'exited', exitCode: 0 });
    } finally {
      await legacy.close();
    }
  });
});

describe.skipIf(SKIP_DOCKER)('executeCommand and a command that waits for input', () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let envId: string;
  const run = (command: string) => call(client, 'executeCommand', { developmentEnvironmentId: envId, command });
  beforeAll(async () => {
    await requireDocker();
    // A wait longer than these tests may take: an answer before it ends comes from the input check.
    server = await startTestServer({ ...DEVENV_ENV, BACKYARD_EXEC_WAIT_MS: '120000' });
    client = await modernHttpClient(server.url, server.alice);
    envId = (await call(client, 'createDevelopmentEnvironment', { chatTitle: 'Asks a name' })).id;
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    if (server) await removeDevenvs(server.home);
  });

  it('answers running with the prompt once the command reads its input, and takes the answer', async () => {
    const asking = await run('echo "name?"; read name; echo "hi $name"');
    expect(asking).toMatchObject({ status: 'running', stdout: 'name?\n' });
    const answered = await call(client, 'interactWithCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: asking.id, stdin: 'Ada' });
    expect(answered).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'name?\nhi Ada\n' });
  }, 60_000);

  it('waits for a quiet command and for a pipeline whose reader waits on another pipe', async () => {
    expect(await run('echo start; sleep 2; echo end')).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'start\nend\n' });
    expect(await run('sleep 2 | cat; echo done')).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'done\n' });
  }, 60_000);
});

describe.skipIf(SKIP_DOCKER)('the development environment image', () => {
  let server: TestServer;
  beforeAll(async () => {
    await requireDocker(DEBIAN_IMAGE);
    server = await startTestServer({ ...DEVENV_ENV, BACKYARD_DEVENV_IMAGE: 'backyard/no-such-image:none' });
  });
  afterAll(async () => {
    await server?.close();
    if (server) await removeDevenvs(server.home);
  });

  it('falls back by itself to Backyard\'s Debian image when the configured one cannot be pulled, and says so', async () => {
    const res = await api(server, 'POST', '/development-environments', { token: server.alice, body: { chatTitle: 'offline' } });
    expect(res.status, res.text).toBe(201);
    const created = res.json() as Record<string, string>;
    expect(created).toMatchObject({
      image: DEBIAN_IMAGE,
      operatingSystem: expect.stringMatching(/^Debian GNU\/Linux/),
      installCommand: 'apt-get update && apt-get install -y <package>',
    });
    const [container] = await containersOf(created.id!);
    expect(container?.Image).toBe(DEBIAN_IMAGE);
    const run = async (command: string) => {
      const r = await api(server, 'POST', `/development-environments/${created.id}/commands-executions`, { token: server.alice, body: { command } });
      return r.json() as { status: string; exitCode?: number; stdout: string; stderr: string };
    };
    // git, curl with CA certificates, node and apt are there, as the answer says.
    expect(await run('git --version && curl --version | head -n 1 && node --version && apt-get --version | head -n 1 && ls /etc/ssl/certs/ca-certificates.crt')).toMatchObject({
      status: 'exited',
      exitCode: 0,
      stdout: expect.stringMatching(/^git version .*\ncurl .*\nv\d+\..*\napt .*\n\/etc\/ssl\/certs\/ca-certificates.crt\n$/),
    });
    // The choice holds: a second environment runs the same image without another try.
    const again = (await api(server, 'POST', '/development-environments', { token: server.alice, body: { chatTitle: 'offline 2' } })).json() as Record<string, string>;
    expect(again.image).toBe(DEBIAN_IMAGE);
    // The guides now name that image and its install command.
    const guide = (await api(server, 'GET', '/guides/run-commands-in-a-development-environment', { token: server.alice })).json() as { content: string };
    expect(guide.content).toContain(`run \`${DEBIAN_IMAGE}\``);
    expect(guide.content).toContain('"command": "apt-get update && apt-get install -y jq"');
  });
});

describe('without a Docker engine', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ...DEVENV_ENV, DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
  });
  afterAll(async () => server.close());

  it('starts, serves other tools, and answers 500 saying Docker is not reachable and how to start it', async () => {
    const res = await api(server, 'POST', '/development-environments', { token: server.alice, body: { chatTitle: 'x' } });
    expect(res.status).toBe(500);
    expect(res.contentType).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^Docker is not reachable at unix:\/\/\/nonexistent\/docker.sock/);
    expect(res.text).toMatch(/Start the Docker engine/);
    const list = await api(server, 'GET', '/development-environments', { token: server.alice });
    expect(list.status).toBe(200);
    expect(list.json()).toEqual([]);
    expect((await api(server, 'POST', '/backend-apps', { token: server.alice, body: { appName: 'still-works' } })).status).toBe(201);
    const client = await modernHttpClient(server.url, server.alice);
    try {
      expect(await failure(client, 'createDevelopmentEnvironment', { chatTitle: 'x' })).toMatch(/Docker is not reachable/);
    } finally {
      await client.close();
    }
  });
});

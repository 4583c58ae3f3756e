import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { dockerClient, type DockerClient } from '../src/platform/devenvs/engine.js';
import { LABEL_ENVIRONMENT, homeFilter, networkHomeFilter } from '../src/platform/devenvs/labels.js';
import { OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { openPlatform } from '../src/platform/platform.js';
import { startBackyard } from '../src/serve.js';

/**
 * Development environments: `executeCommand` of `true` end to
 * end over MCP (streamable HTTP, in-process server) against a bare dockerode exec of the same
 * command in the same container, measured alternately in the same run, as a ratio (target: within
 * 1.5×); and the time to create an environment with the image present (target: under 1 s).
 * Needs a Docker engine (scripts/ensure-docker) and the image in BACKYARD_DEVENV_IMAGE (default:
 * backyard/devenv:offline).
 */
const ROUNDS = Number(process.env.BENCH_EXEC_ROUNDS ?? 200);
const CREATES = Number(process.env.BENCH_CREATES ?? 10);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** `sh -c true` as a bare exec: create, start (hijacked), wait for the end of the output, read the exit code. */
async function bareExec(docker: DockerClient, containerId: string): Promise<void> {
  const exec = await docker.getContainer(containerId).exec({ Cmd: ['sh', '-c', 'true'], AttachStdout: true, AttachStderr: true });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const sink = new PassThrough();
  sink.resume();
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
  for (;;) {
    const info = await exec.inspect();
    if (!info.Running) break;
  }
}

export async function devenvsBench(): Promise<void> {
  const image = process.env.BACKYARD_DEVENV_IMAGE ?? OFFLINE_IMAGE;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-'));
  const config = loadConfig({ home, port: 0, host: '127.0.0.1' }, { BACKYARD_LOG_LEVEL: 'silent', BACKYARD_DEVENV_IMAGE: image, DOCKER_HOST: process.env.DOCKER_HOST });
  const docker = dockerClient(config.dockerHost);
  try {
    await docker.ping();
  } catch {
    console.log('skipped: no Docker engine answers (run bash scripts/ensure-docker)');
    return;
  }
  const platform = await openPlatform(config, createLogger('silent'));
  const { token } = await platform.services.accounts.create('bench');
  const server = await startBackyard(platform, { port: 0, host: '127.0.0.1' });
  const client = new Client({ name: 'backyard-bench', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent as Record<string, unknown>;
    };

    // The image is present: the first creation may pull it, so it is not counted.
    await call('createDevelopmentEnvironment', { chatTitle: 'warm-up' });
    const creations: number[] = [];
    let envId = '';
    for (let i = 0; i < CREATES; i++) {
      const start = process.hrtime.bigint();
      envId = String((await call('createDevelopmentEnvironment', { chatTitle: `bench-${i}` })).id);
      creations.push(ms(start));
    }
    console.log(`createDevelopmentEnvironment over MCP (image present): ${median(creations).toFixed(0)} ms median, ${Math.max(...creations).toFixed(0)} ms max over ${CREATES} (target: under 1000 ms)`);

    const [container] = await docker.listContainers({ filters: { label: [`${LABEL_ENVIRONMENT}=${envId}`] } });
    const mcp: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < 20; i++) {
      await bareExec(docker, container!.Id);
      await call('executeCommand', { developmentEnvironmentId: envId, command: 'true' });
    }
    for (let i = 0; i < ROUNDS; i++) {
      let start = process.hrtime.bigint();
      await bareExec(docker, container!.Id);
      bare.push(ms(start));
      start = process.hrtime.bigint();
      const result = await call('executeCommand', { developmentEnvironmentId: envId, command: 'true' });
      mcp.push(ms(start));
      if (result.exitCode !== 0) throw new Error(`true answered ${JSON.stringify(result)}`);
    }
    const ratio = median(mcp) / median(bare);
    console.log(`bare dockerode exec of sh -c true:          ${median(bare).toFixed(1).padStart(6)} ms median over ${ROUNDS}`);
    console.log(`executeCommand true over MCP (end to end):  ${median(mcp).toFixed(1).padStart(6)} ms median over ${ROUNDS}  ${ratio.toFixed(2)}× bare exec (target: within 1.5×)`);
  } finally {
    await client.close().catch(() => undefined);
    await server.close();
    await platform.close();
    for (const c of await docker.listContainers({ all: true, filters: homeFilter(path.resolve(home)) })) {
      await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    }
    const { Volumes } = await docker.listVolumes({ filters: homeFilter(path.resolve(home)) });
    for (const v of Volumes ?? []) await docker.getVolume(v.Name).remove().catch(() => undefined);
    for (const n of await docker.listNetworks({ filters: networkHomeFilter(path.resolve(home)) })) await docker.getNetwork(n.Id).remove().catch(() => undefined);
    fs.rmSync(home, { recursive: true, force: true });
  }
}

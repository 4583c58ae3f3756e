import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../tools/index.js';
import { CLI } from './helpers/mcpClients.js';
import { makeHome, removeHome, startTestServer, type TestServer } from './helpers/server.js';

const exec = promisify(execFile);
const INSPECTOR = path.resolve(import.meta.dirname, '../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

let home: string;
let server: TestServer;
beforeAll(async () => {
  home = makeHome();
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  removeHome(home);
});

/** Runs the MCP Inspector's CLI (a client nobody here wrote); HOME is a temporary folder for its catalog. */
const inspector = (args: string[]) =>
  exec(process.execPath, [INSPECTOR, '--cli', ...args], { env: { PATH: process.env.PATH ?? '', HOME: home }, timeout: 60_000 });

const stdioTarget = () => ['-e', `BACKYARD_HOME=${home}`, '-e', 'BACKYARD_PORT=0', '-e', 'BACKYARD_LOG_LEVEL=warn', process.execPath, CLI, 'mcp'];

describe('the MCP Inspector CLI', () => {
  it('lists the tools over stdio with no schema portability problem (--strict)', async () => {
    const { stdout } = await inspector(['--strict', ...stdioTarget(), '--method', 'tools/list']);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string }> };
    expect(tools.map((t) => t.name)).toEqual(operations.map((op) => op.name));
  });

  it('calls a tool over stdio and gets structuredContent', async () => {
    const { stdout } = await inspector([...stdioTarget(), '--method', 'tools/call', '--tool-name', 'createBackendApp', '--tool-arg', 'appName=from-inspector']);
    const result = JSON.parse(stdout) as { structuredContent: { appName: string; apiURL: string } };
    expect(result.structuredContent.appName).toBe('from-inspector');
    expect(result.structuredContent.apiURL).toMatch(/\/data$/);
  });

  it('exits 5 with the error text when a tool fails', async () => {
    await inspector([...stdioTarget(), '--method', 'tools/call', '--tool-name', 'createBackendApp', '--tool-arg', 'appName=twice']);
    const failure = await inspector([...stdioTarget(), '--method', 'tools/call', '--tool-name', 'createBackendApp', '--tool-arg', 'appName=twice']).catch((e) => e);
    expect(failure.code).toBe(5);
    expect(failure.stdout + failure.stderr).toContain('A Backend App named \\"twice\\" already exists');
  });

  it('reads a guide resource over streamable HTTP with a bearer token', async () => {
    const title = server.platform.services.guides.titles()[0]!;
    const { stdout } = await inspector([`${server.url}/mcp`, '--header', `Authorization: Bearer ${server.alice}`, '--method', 'resources/read', '--uri', `guide://${title}`]);
    const { contents } = JSON.parse(stdout) as { contents: Array<{ text: string }> };
    expect(contents[0]!.text).toBe(server.platform.services.guides.get(title)!.content);
  });
});

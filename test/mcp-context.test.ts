/**
 * A lean context, scopes and features: what an assistant pays for tools/list, guides
 * and cloud code as plain text, portable schemas, and connections narrowed to read-only, to feature
 * groups or to one Backend App (by the client's own request or by the token), through real MCP
 * clients over HTTP and stdio and through the REST API with the same tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotationsFor } from '../tools/operation.js';
import { operations, operationsByName } from '../tools/index.js';
import { legacyHttpClient, modernHttpClient, modernStdioClient, stdioEnv, type AnyMcpClient } from './helpers/mcpClients.js';
import { api, makeHome, removeHome, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let aliceId: string;
let appId: string;
let otherAppId: string;

beforeAll(async () => {
  server = await startTestServer();
  aliceId = (await server.platform.services.accounts.findByLogin('alice'))!.id;
  const created = async (appName: string) => (await api(server, 'POST', '/backend-apps', { token: server.alice, body: { appName } })).json() as { appId: string };
  appId = (await created('context-one')).appId;
  otherAppId = (await created('context-two')).appId;
});
afterAll(async () => server?.close());

const textOf = (result: Record<string, any>) => (result.content as Array<{ type: string; text: string }>)[0]!.text;
const names = async (client: AnyMcpClient) => (await client.listTools()).tools.map((t) => t.name as string);
const mutating = operations.filter((op) => !annotationsFor(op).readOnlyHint).map((op) => op.name);

/** Every property of every (nested) object schema, with its path. */
function properties(schema: unknown, path = ''): Array<[string, Record<string, unknown>]> {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const own = Object.entries((s.properties ?? {}) as Record<string, Record<string, unknown>>).flatMap(([name, p]) => [[`${path}${name}`, p] as [string, Record<string, unknown>], ...properties(p, `${path}${name}.`)]);
  return [...own, ...properties(s.items, `${path}[].`)];
}

describe('a lean context', () => {
  it.each([
    ['v2 client (2026-07-28)', () => modernHttpClient(server.url, server.alice)],
    ['legacy client (2025-11-25)', () => legacyHttpClient(server.url, server.alice)],
  ])('tools/list through the %s is at most 21,200 characters, with portable schemas', async (_label, connect) => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(operations.length);
      // 21,000 until Web Apps got `replicas` (swarm services), in two inputs and the Web App answer of five tools: 21,125.
      expect(JSON.stringify(tools).length).toBeLessThanOrEqual(21_200);
      for (const tool of tools) {
        expect(tool.inputSchema, tool.name).not.toHaveProperty('$schema');
        for (const [path, property] of properties(tool.inputSchema)) {
          const typed = ['type', 'anyOf', 'oneOf', 'enum', 'const', '$ref'].some((k) => k in property);
          expect(typed, `${tool.name}.${path} has no type`).toBe(true);
        }
      }
      // The rules that matter are still said: examples an assistant cannot do without.
      const described = Object.fromEntries(tools.map((t) => [t.name, t.description as string]));
      expect(described.deployCloudCode).toMatch(/required from cloud\/main\.js/);
      expect(described.deployCloudCode).toMatch(/Parse is a global/);
      expect(described.createDevelopmentEnvironment).toMatch(/installCommand/);
      expect(described.createRepohostInstallationAccessToken).toMatch(/Never show it to the person/);
      expect(described.callBackendAPI).toMatch(/GET \/schemas/);
    } finally {
      await client.close();
    }
  });

  it('getGuide and getCloudCode answer their text as text content, once, not JSON-escaped', async () => {
    const client = await modernHttpClient(server.url, server.alice);
    try {
      const title = 'write-and-deploy-cloud-code';
      const guide = await client.callTool({ name: 'getGuide', arguments: { guideTitle: title } });
      expect(guide.structuredContent).toBeUndefined();
      expect(guide.content).toHaveLength(1);
      expect(textOf(guide)).toMatch(/^# /);
      expect(textOf(guide)).toBe((await api(server, 'GET', `/guides/${title}`, { token: server.alice }).then((r) => r.json())) .content);

      const code = await client.callTool({ name: 'getCloudCode', arguments: { appId, path: 'cloud/main.js' } });
      expect(code.structuredContent).toBeUndefined();
      expect(textOf(code)).toBe((await api(server, 'GET', `/backend-apps/${appId}/cloud-code?path=cloud/main.js`, { token: server.alice })).text);
      // Structured answers stay structured.
      const apps = await client.callTool({ name: 'getBackendApps', arguments: { appName: 'context-one' } });
      expect(apps.structuredContent).toEqual({ backendApps: [{ appId, appName: 'context-one' }] });
    } finally {
      await client.close();
    }
  });
});

describe('connections narrowed by the client', () => {
  it('read_only=true lists only the tools that change nothing, and says so in the instructions', async () => {
    const client = await modernHttpClient(server.url, server.alice, '?read_only=true');
    try {
      const listed = await names(client);
      expect(listed.length).toBeGreaterThan(5);
      for (const name of listed) expect(annotationsFor(operationsByName[name as keyof typeof operationsByName]).readOnlyHint, name).toBe(true);
      expect(listed).not.toContain('createBackendApp');
      const apps = await client.callTool({ name: 'getBackendApps', arguments: {} });
      expect(apps.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('features=guides,backend offers only those groups; an unknown group is a 400 naming it', async () => {
    const client = await modernHttpClient(server.url, server.alice, '?features=guides,backend');
    try {
      const listed = await names(client);
      expect(new Set(listed.map((n) => operationsByName[n as keyof typeof operationsByName].feature))).toEqual(new Set(['guides', 'backend']));
      expect(listed).toContain('callBackendAPI');
      expect(listed).not.toContain('executeCommand');
      expect(listed).not.toContain('createWebApp');
    } finally {
      await client.close();
    }
    const refused = await fetch(`${server.url}/mcp?features=guides,dns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.alice}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/features must list feature groups among guides, devenv, backend, webapps.*"guides,dns"/);
  });

  it('backyard mcp --read-only --features=guides,backend over stdio', async () => {
    const home = makeHome();
    const client = await modernStdioClient(stdioEnv(home), ['--read-only', '--features=guides,backend']);
    try {
      const listed = await names(client);
      expect(listed.sort()).toEqual(['callBackendAPI', 'getBackendApp', 'getBackendApps', 'getCloudCode', 'getCloudCodeVersions', 'getGuide'].filter((n) => !mutating.includes(n as never)).sort());
    } finally {
      await client.close();
      removeHome(home);
    }
  });
});

describe('tokens limited to read-only or to one Backend App', () => {
  it('a read-only token lists every tool but is refused changes, over MCP and REST alike', async () => {
    const token = await server.platform.services.accounts.issueToken(aliceId, 'user', { readOnly: true, appId: null });
    const client = await modernHttpClient(server.url, token);
    try {
      expect(await names(client)).toEqual(operations.map((op) => op.name));
      const refused = await client.callTool({ name: 'createBackendApp', arguments: { appName: 'not-made' } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^createBackendApp changes things, and this token is read-only/);
      expect((await client.callTool({ name: 'getBackendApps', arguments: {} })).isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
    const rest = await api(server, 'POST', '/backend-apps', { token, body: { appName: 'not-made' } });
    expect([400, 403]).toContain(rest.status);
    expect(rest.text).toMatch(/read-only/);
    expect((await api(server, 'GET', '/backend-apps?app-name=not-made', { token: server.alice })).json()).toEqual([]);
    // A limited token is not for the dashboard or the git host, where its limits could not hold.
    expect(await server.platform.services.accounts.authenticate(token)).toBeUndefined();
    expect((await server.platform.services.accounts.authenticate(server.alice))?.login).toBe('alice');
  });

  it('a token for one Backend App reaches that app only', async () => {
    const token = await server.platform.services.accounts.issueToken(aliceId, 'user', { readOnly: false, appId });
    const client = await modernHttpClient(server.url, token);
    try {
      const listed = await names(client);
      expect(listed).toContain('callBackendAPI');
      expect(listed).toContain('getGuide');
      expect(listed).not.toContain('createBackendApp');
      expect(listed).not.toContain('getBackendApps');
      expect(listed).not.toContain('executeCommand');
      const own = await client.callTool({ name: 'getBackendApp', arguments: { appId } });
      expect((own.structuredContent as { backendApps: Array<{ appId: string }> }).backendApps[0]!.appId).toBe(appId);
      const other = await client.callTool({ name: 'getBackendApp', arguments: { appId: otherAppId } });
      expect(other.isError).toBe(true);
      expect(textOf(other)).toMatch(new RegExp(`limited to the Backend App ${appId}; appId "${otherAppId}" is out of its reach`));
      const schemas = await client.callTool({ name: 'callBackendAPI', arguments: { appId, requests: [{ method: 'GET', url: '/schemas' }] } });
      expect(schemas.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
    expect((await api(server, 'GET', `/backend-apps/${otherAppId}`, { token })).text).toMatch(/out of its reach/);
    expect((await api(server, 'POST', '/development-environments', { token, body: { chatTitle: 'x' } })).text).toMatch(/limited to the Backend App/);
    // Asking for another app in the URL on top of the token's leaves nothing.
    const none = await modernHttpClient(server.url, token, `?app=${otherAppId}`);
    try {
      expect(await names(none)).toEqual([]);
    } finally {
      await none.close();
    }
  });
});

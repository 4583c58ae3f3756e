import { fillAddresses } from '../src/platform/urls.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { annotationsFor } from '../tools/operation.js';
import { compactSchema } from '../src/mcp/schemas.js';
import { operations, operationsByName } from '../tools/index.js';
import {
  legacyHttpClient,
  legacyStdioClient,
  modernHttpClient,
  modernStdioClient,
  stdioEnv,
  type AnyMcpClient,
} from './helpers/mcpClients.js';
import { api, makeHome, removeHome, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let stdioHome: string;
beforeAll(async () => {
  server = await startTestServer();
  stdioHome = makeHome();
});
afterAll(async () => {
  await server.close();
  removeHome(stdioHome);
});

const ajv = new Ajv2020({ strict: false, allErrors: true });

const textOf = (result: Record<string, any>) => (result.content as Array<{ type: string; text: string }>)[0]!.text;

/** The REST answer for the same flat input, to compare error texts across front ends. */
const restTextFor = async (body: unknown) => (await api(server, 'POST', '/backend-apps', { token: server.alice, body })).text;

const clients: Array<[string, () => Promise<AnyMcpClient & { protocol?: string | undefined }>]> = [
  ['v2 client (2026-07-28) over streamable HTTP', () => modernHttpClient(server.url, server.alice)],
  ['legacy v1 client (2025-11-25) over streamable HTTP', () => legacyHttpClient(server.url, server.alice)],
  ['v2 client (2026-07-28) over stdio', () => modernStdioClient(stdioEnv(stdioHome))],
  ['legacy v1 client (2025-11-25) over stdio', () => legacyStdioClient(stdioEnv(stdioHome))],
];

describe.each(clients)('MCP through the %s', (label, connect) => {
  let client: AnyMcpClient & { protocol?: string | undefined };
  const suffix = label.replace(/\W+/g, '-');
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => client.close());

  it('negotiates the revision it asked for', () => {
    if (label.startsWith('v2')) expect(client.protocol).toBe('2026-07-28');
  });

  it('lists exactly the built operations, in the spec\'s order, with schemas and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(operations.map((op) => op.name));
    for (const tool of tools) {
      const op = operationsByName[tool.name as keyof typeof operationsByName];
      expect(tool.title).toBe(op.title);
      // This server's addresses are filled in: no placeholder of ours reaches an assistant.
      // A stdio client's own process listens on a port of its own: compare with the port left out.
      const portless = (text: string) => text.replace(/(localhost|backyard\.internal):\d+/g, '$1:PORT');
      expect(portless(tool.description)).toBe(portless(fillAddresses(op.description, server.platform.services.urls)));
      expect(tool.description).not.toMatch(/\{(backyard_url|base_url|data_api_url|sdk_script_url|repo_host|backyard_url_in_environments|environment_git_host|hosting:[a-z0-9-]+)\}/);
      expect(tool.description).not.toContain('localhost:4000');
      expect(tool.description.length).toBeGreaterThan(80);
      // Hints left out mean their defaults (MCP "ToolAnnotations"); a read-only tool's destructive and idempotent hints mean nothing.
      const sent = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true, ...tool.annotations };
      const expected = annotationsFor(op);
      expect([sent.readOnlyHint, sent.openWorldHint], op.name).toEqual([expected.readOnlyHint, expected.openWorldHint]);
      if (!expected.readOnlyHint) expect([sent.destructiveHint, sent.idempotentHint], op.name).toEqual([expected.destructiveHint, expected.idempotentHint]);
      expect(tool.inputSchema).toEqual(compactSchema(z.toJSONSchema(op.input, { io: 'input' }) as Record<string, unknown>));
      expect(tool.inputSchema.type).toBe('object');
      // Output shapes are in the OpenAPI document; tools/list stays lean.
      expect(tool.outputSchema).toBeUndefined();
    }
    const guideTool = tools.find((t) => t.name === 'getGuide')!;
    expect(guideTool.inputSchema.properties.guideTitle.enum).toEqual(server.platform.services.guides.titles());
  });

  it('tools/call returns structuredContent that validates against the output schema, and the same JSON as text; guides as text alone', async () => {
    const check = (name: string, result: Record<string, any>) => {
      expect(result.isError ?? false, textOf(result)).toBe(false);
      const op = operationsByName[name as keyof typeof operationsByName];
      if (op.textResult) {
        // A guide or a cloud code listing is the text itself, not JSON-escaped in an object.
        expect(result.structuredContent).toBeUndefined();
        expect(result.content).toHaveLength(1);
        return { [op.textResult]: textOf(result) } as Record<string, any>;
      }
      const validate = ajv.compile(z.toJSONSchema(op.output, { io: 'output' }));
      expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
      return result.structuredContent as Record<string, any>;
    };

    const created = check('createBackendApp', await client.callTool({ name: 'createBackendApp', arguments: { appName: `mcp-${suffix}` } }));
    expect(created.appName).toBe(`mcp-${suffix}`);
    expect(created.apiURL).toMatch(/^http:\/\/localhost:\d+\/data$/);
    // The URLs it returns work: the HTTP listener runs beside stdio too.
    expect((await fetch(created.dashboardURL)).status).toBe(200);

    const listed = check('getBackendApps', await client.callTool({ name: 'getBackendApps', arguments: { appName: `mcp-${suffix}` } }));
    expect(listed).toEqual({ backendApps: [{ appId: created.appId, appName: `mcp-${suffix}` }] });
    const one = check('getBackendApp', await client.callTool({ name: 'getBackendApp', arguments: { appId: created.appId } }));
    expect(one).toEqual({ backendApps: [created] });
    const none = check('getBackendApp', await client.callTool({ name: 'getBackendApp', arguments: { appId: 'unknown' } }));
    expect(none).toEqual({ backendApps: [] });

    const title = server.platform.services.guides.titles()[0]!;
    const guide = check('getGuide', await client.callTool({ name: 'getGuide', arguments: { guideTitle: title } }));
    expect(guide.content).toMatch(/^# /);
    // Every guide comes with this server's real addresses, no placeholder of ours.
    // (A stdio client's own process listens on a port of its own.)
    const deploy = check('getGuide', await client.callTool({ name: 'getGuide', arguments: { guideTitle: 'deploy-a-web-app-from-the-built-in-git-host' } }));
    expect(deploy.content).toMatch(/git push http:\/\/x-access-token:<token from step 7>@backyard\.internal:\d+\/git\/<login>\/hello-web\.git main/);
    expect(deploy.content).toMatch(/http:\/\/hello-web\.localhost:\d+\//);
    for (const guideTitle of server.platform.services.guides.titles()) {
      const { content } = check('getGuide', await client.callTool({ name: 'getGuide', arguments: { guideTitle } }));
      expect(content, guideTitle).not.toMatch(/\{(backyard_url|base_url|data_api_url|sdk_script_url|repo_host|backyard_url_in_environments|environment_git_host|hosting:[a-z0-9-]+)\}|localhost:4000/);
    }
  });

  it('failures are isError results carrying the REST error text', async () => {
    for (const args of [{ appName: 42 }, {}, { appName: 'ok', extra: true }, { appName: 'y'.repeat(64) }]) {
      const result = await client.callTool({ name: 'createBackendApp', arguments: args });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(await restTextFor(args));
    }
    const unknownGuide = await client.callTool({ name: 'getGuide', arguments: { guideTitle: 'how-to-fly' } });
    expect(unknownGuide.isError).toBe(true);
    expect(textOf(unknownGuide)).toBe((await api(server, 'GET', '/guides/how-to-fly', { token: server.alice })).text);

    await client.callTool({ name: 'createBackendApp', arguments: { appName: `dup-${suffix}` } });
    const dup = await client.callTool({ name: 'createBackendApp', arguments: { appName: `dup-${suffix}` } });
    expect(dup.isError).toBe(true);
    expect(textOf(dup)).toBe(`A Backend App named "dup-${suffix}" already exists in this account. Choose another appName, or use getBackendApps to find the existing one.`);
  });

  it('lists and reads the guides as resources, and offers them as prompts', async () => {
    const titles = server.platform.services.guides.titles();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(titles.map((t) => `guide://${t}`).sort());
    for (const r of resources) expect(r.description, r.uri).toBeTruthy();
    const read = await client.readResource({ uri: `guide://${titles[0]}` });
    expect(read.contents[0]!.text).toBe(fillAddresses(server.platform.services.guides.get(titles[0]!)!.content, server.platform.services.urls));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([...titles].sort());
  });
});

describe('MCP over HTTP: transport security', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });

  it('answers 401 without a token or with a wrong one', async () => {
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post({ authorization: 'Bearer by_wrong' })).status).toBe(401);
  });

  it('answers 403 for a foreign Origin, even with a valid token', async () => {
    const res = await post({ authorization: `Bearer ${server.alice}`, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/evil\.example/);
  });

  it('answers 403 for a Host that is not this server (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/mcp`, {
        method: 'POST',
        headers: { host: 'attacker.example:80', authorization: `Bearer ${server.alice}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
  });

  it('accepts the server\'s own origin', async () => {
    const res = await post({ authorization: `Bearer ${server.alice}`, origin: server.url });
    expect(res.status).toBe(200);
  });
});

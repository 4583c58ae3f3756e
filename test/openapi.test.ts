import fs from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiSnapshot, withSettingsTable, withToolsTable } from '../src/docs/generate.js';
import { packageVersion } from '../src/version.js';
import { allOperations, lifecycleOperations, operations, specOperations } from '../tools/index.js';
import { LIFECYCLE_NAMES, OPERATION_NAMES, annotationsFor } from '../tools/operation.js';
import { modernHttpClient } from './helpers/mcpClients.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const root = path.resolve(import.meta.dirname, '..');

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1 and lists every routed operation, with its listed status codes', async () => {
    const response = await fetch(`${server.url}/v1/openapi.json`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as any;
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc.servers[0].url).toBe(`${server.url}/v1`);

    const documented = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, methods]) =>
      Object.entries(methods).map(([method, o]) => ({ path: p, method: method.toUpperCase(), ...o })),
    );
    expect(documented.map((o) => o.operationId).sort()).toEqual(operations.map((op) => op.name).sort());
    for (const op of operations) {
      const entry = documented.find((o) => o.operationId === op.name)!;
      expect(entry.path).toBe(op.path);
      expect(entry.method).toBe(op.method);
      expect(Object.keys(entry.responses).map(Number).sort()).toEqual([op.successStatus, ...op.errors].sort());
    }
    const list = documented.find((o) => o.operationId === 'getBackendApps')!;
    expect(list.parameters).toEqual([expect.objectContaining({ name: 'app-name', in: 'query' })]);
    expect(list.responses['200'].content['application/json'].schema.type).toBe('array');
  });
});

describe('one operation table', () => {
  it('declares all 20 operations of Interface A with the spec\'s names, methods and paths', () => {
    expect(specOperations.map((op) => op.name)).toEqual([...OPERATION_NAMES]);
    const table = specOperations.map((op) => `${op.method} ${op.path}`);
    expect(table).toEqual([
      'GET /guides/{guideTitle}',
      'POST /development-environments',
      'GET /development-environments',
      'POST /development-environments/{developmentEnvironmentId}/commands-executions',
      'POST /development-environments/{developmentEnvironmentId}/commands-executions/{commandExecutionId}',
      'GET /development-environments/{developmentEnvironmentId}/commands-executions/{commandExecutionId}',
      'POST /repohost-installation-access-token',
      'POST /backend-apps',
      'GET /backend-apps',
      'GET /backend-apps/{appId}',
      'POST /backend-apps/{appId}/cloud-code',
      'GET /backend-apps/{appId}/cloud-code',
      'POST /backend-apps/{appId}/call-backend-api',
      'POST /backend-apps/{appId}/activate-web-hosting',
      'POST /web-apps',
      'GET /web-apps',
      'GET /web-apps/{appId}',
      'PUT /web-apps/{appId}',
      'POST /web-apps/{appId}/deployments',
      'GET /web-apps/{appId}/deployments/{deploymentId}',
    ]);
    expect(specOperations.map((op) => op.successStatus)).toEqual([200, 201, 200, 201, 200, 200, 201, 201, 200, 200, 200, 200, 200, 200, 201, 200, 200, 200, 201, 200]);
    expect(specOperations.map((op) => op.errors.join(','))).toEqual([
      '400,401,404,500', '400,401,500', '401,500', '400,401,404,500', '400,401,404,500', '401,404,500', '400,401,500',
      '400,401,500', '401,500', '401,500', '400,401,403,404,500', '400,401,403,404,500', '400,401,500', '400,401,404,500',
      '400,401,500', '401,500', '401,404,500', '400,401,404,500', '400,401,404,500', '401,404,500',
    ]);
  });

  it('declares the lifecycle operations after the spec\'s 20, with methods, paths, statuses, errors and annotations', () => {
    expect(allOperations.map((op) => op.name)).toEqual([...OPERATION_NAMES, ...LIFECYCLE_NAMES]);
    const row = (op: (typeof lifecycleOperations)[number]) => {
      const a = annotationsFor(op);
      return `${op.name} ${op.method} ${op.path} ${op.successStatus} [${op.errors.join(',')}] destructive=${a.destructiveHint} idempotent=${a.idempotentHint} readOnly=${a.readOnlyHint}`;
    };
    expect(lifecycleOperations.map(row)).toEqual([
      'deleteBackendApp DELETE /backend-apps/{appId} 200 [400,401,404,500] destructive=true idempotent=true readOnly=false',
      'stopWebApp POST /web-apps/{appId}/stop 200 [400,401,404,500] destructive=true idempotent=true readOnly=false',
      'startWebApp POST /web-apps/{appId}/start 200 [400,401,404,500] destructive=false idempotent=true readOnly=false',
      'deleteWebApp DELETE /web-apps/{appId} 200 [400,401,404,500] destructive=true idempotent=true readOnly=false',
      'deleteDevelopmentEnvironment DELETE /development-environments/{developmentEnvironmentId} 200 [400,401,404,500] destructive=true idempotent=true readOnly=false',
      'restartDevelopmentEnvironment POST /development-environments/{developmentEnvironmentId}/restart 200 [400,401,404,500] destructive=true idempotent=false readOnly=false',
      'getCloudCodeVersions GET /backend-apps/{appId}/cloud-code/versions 200 [400,401,404,500] destructive=false idempotent=true readOnly=true',
      'rollbackCloudCode POST /backend-apps/{appId}/cloud-code/rollback 200 [400,401,403,404,500] destructive=true idempotent=false readOnly=false',
    ]);
    for (const op of lifecycleOperations) expect(op.handler, op.name).not.toBeNull();
    expect(operations.length).toBe(specOperations.filter((op) => op.handler).length + 8);
  });

  it('MCP tools = REST routes = OpenAPI operations', async () => {
    const client = await modernHttpClient(server.url, server.alice);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    await client.close();
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as any;
    const documented = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((m) => Object.values(m).map((o) => o.operationId));
    const routed = server.http.app.printRoutes({ commonPrefix: false });
    expect(tools.sort()).toEqual(documented.sort());
    for (const op of allOperations) {
      const fastifyPath = `/v1${op.path.replace(/\{(\w+)\}/g, ':$1')}`;
      const response = await fetch(`${server.url}${fastifyPath.replace(/:\w+/g, 'x')}`, { method: op.method });
      // A routed operation asks for a token (401); an unbuilt one is not there at all (404).
      expect(response.status, `${op.method} ${fastifyPath}`).toBe(op.handler ? 401 : 404);
      expect(tools.includes(op.name)).toBe(op.handler !== null);
    }
    expect(routed).toContain('/v1/backend-apps');
  });

  it('the committed docs/openapi.json and README tool and configuration tables are what the tables generate (run npm run docs)', () => {
    expect(fs.readFileSync(path.join(root, 'docs', 'openapi.json'), 'utf8')).toBe(openApiSnapshot(operations, packageVersion()));
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toBe(withToolsTable(readme, operations));
    expect(readme).toBe(withSettingsTable(readme));
  });
});

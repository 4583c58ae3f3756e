import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';

/** The calls the tests make, which both SDK lines offer under the same names. */
export interface AnyMcpClient {
  listTools(): Promise<{ tools: Array<Record<string, any>> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Record<string, any>>;
  listResources(): Promise<{ resources: Array<Record<string, any>> }>;
  readResource(params: { uri: string }): Promise<{ contents: Array<Record<string, any>> }>;
  listPrompts(): Promise<{ prompts: Array<Record<string, any>> }>;
  close(): Promise<void>;
}

export const CLI = path.resolve(import.meta.dirname, '../../dist/src/cli.js');

const info = { name: 'backyard-tests', version: '1.0.0' };

/** The v2 client pinned to revision 2026-07-28; `query` is appended to `/mcp` (`?read_only=true`). */
export async function modernHttpClient(url: string, token: string, query = ''): Promise<AnyMcpClient & { protocol: string | undefined }> {
  const client = new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernHttp(new URL(`${url}/mcp${query}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return Object.assign(client as unknown as AnyMcpClient, { protocol: client.getNegotiatedProtocolVersion() });
}

/** The maintenance-line client (`@modelcontextprotocol/sdk` 1.x, revision 2025-11-25). */
export async function legacyHttpClient(url: string, token: string): Promise<AnyMcpClient> {
  const client = new LegacyClient(info);
  await client.connect(new LegacyHttp(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client as unknown as AnyMcpClient;
}

/** Environment for a spawned `backyard mcp`: its own home, a free port, quiet logs. */
export const stdioEnv = (home: string, extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: home,
  BACKYARD_HOME: home,
  BACKYARD_PORT: '0',
  BACKYARD_LOG_LEVEL: 'warn',
  ...extra,
});

/** `backyard mcp` with `flags` (`--read-only`, `--features=…`), through the v2 client. */
export async function modernStdioClient(env: Record<string, string>, flags: string[] = []): Promise<AnyMcpClient & { protocol: string | undefined }> {
  const client = new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernStdio({ command: process.execPath, args: [CLI, 'mcp', ...flags], env, stderr: 'pipe' }));
  return Object.assign(client as unknown as AnyMcpClient, { protocol: client.getNegotiatedProtocolVersion() });
}

export async function legacyStdioClient(env: Record<string, string>): Promise<AnyMcpClient> {
  const client = new LegacyClient(info);
  await client.connect(new LegacyStdio({ command: process.execPath, args: [CLI, 'mcp'], env, stderr: 'pipe' }));
  return client as unknown as AnyMcpClient;
}

import { operations } from '../tools/index.js';
import { mcpHttp } from './mcp/http.js';
import type { Platform } from './platform/platform.js';
import { startHttpServer, type HttpServer } from './server/http.js';

/**
 * Starts Backyard's HTTP server with every interface (docs/design.md, "One process, one port"): the
 * server's own (src/server) and the MCP endpoint (src/mcp), which meet here and in the CLI only, so
 * that neither front end imports the other.
 * @throws Error with code EADDRINUSE when the port is taken.
 */
export const startBackyard = (platform: Platform, options: { port: number; host: string }): Promise<HttpServer> =>
  startHttpServer(platform, { ...options, mounts: [mcpHttp(platform, operations)] });

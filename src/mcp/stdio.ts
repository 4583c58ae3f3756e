import { fillAddresses } from '../platform/urls.js';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { operations } from '../../tools/index.js';
import { openPlatform, type Platform } from '../platform/platform.js';
import { localExecutor, remoteExecutor, type Executor, type RemoteExecutor } from './executor.js';
import { createMcpServer } from './server.js';
import type { McpProfile } from './profile.js';

/** How `backyard mcp` serves HTTP or finds the server already serving its home (given by the CLI). */
export interface StdioHttp {
  /** Starts the HTTP server with every interface (src/serve.ts). @throws Error EADDRINUSE when the port is taken. */
  start(platform: Platform, options: { port: number; host: string }): Promise<{ close(): Promise<void> }>;
  /** The Backyard serving `home`, if one answers. */
  findRunning(home: string): Promise<{ url: string } | undefined>;
}

/**
 * `backyard mcp`: MCP over stdio as `BACKYARD_ACCOUNT` (docs/design.md, "One process, one port").
 * Runs the platform and its HTTP listener in this process so the URLs it returns work; when a
 * Backyard already serves the same home, forwards tool calls to its `/mcp` instead (progress and
 * cancellation included),
 * with a token made for this process (with the profile's read-only and app limits) and revoked at
 * exit. `profile` is what the command line asked for (`--read-only`, `--features`, `--app`).
 * Nothing but MCP is written to stdout.
 * @returns when stdin closes or the process is told to stop.
 */
export async function runStdioMcp(config: Config, log: Logger, http: StdioHttp, profile: McpProfile = { limits: {}, hideReadOnly: false }): Promise<void> {
  const platform = await openPlatform(config, log);
  const account = await platform.services.accounts.ensure(config.account);
  let stopHttp: (() => Promise<void>) | undefined;
  let forwardToken: string | undefined;
  let forwarder: RemoteExecutor | undefined;
  let execute: Executor;

  let running = await http.findRunning(config.home);
  if (!running) {
    try {
      const server = await http.start(platform, { port: config.port, host: config.host });
      stopHttp = server.close;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      running = await http.findRunning(config.home);
      if (!running) {
        await platform.close();
        throw new Error(
          `Port ${config.port} is taken by another program, not by a Backyard using ${config.home}. Set BACKYARD_PORT to a free port.`,
        );
      }
    }
  }
  if (running) {
    forwardToken = await platform.services.accounts.issueToken(account.id, 'forward', { readOnly: profile.limits.readOnly !== undefined, appId: profile.limits.appId ?? null });
    forwarder = remoteExecutor(`${running.url}/mcp`, forwardToken);
    execute = forwarder.execute;
    platform.services.urls.bindDefault(running.url);
    log.info({ url: running.url }, 'forwarding MCP tool calls to the Backyard already serving this home');
  } else {
    execute = localExecutor({ account, services: platform.services, limits: profile.limits });
  }

  const fill = (text: string) => fillAddresses(text, platform.services.urls);
  const handle = serveStdio(() => createMcpServer(operations, execute, platform.services.guides, log, fill, profile), {
    onerror: (err) => log.error({ err }, 'MCP stdio failure'),
  });

  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await handle.close().catch(() => undefined);
  await forwarder?.close();
  await stopHttp?.();
  if (forwardToken) await platform.services.accounts.revokeToken(forwardToken);
  await platform.close();
}

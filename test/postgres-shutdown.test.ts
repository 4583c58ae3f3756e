/**
 * A real `backyard serve` on a PostgreSQL cluster of its own, stopped with SIGTERM after the cluster
 * went away (src/cli.ts `serve`, src/platform/platform.ts `close`): closing cannot mark interrupted
 * deployments, and the server says so in its log and exits with 1, rather than crashing on an
 * unhandled rejection with a stack trace on its standard error.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { postgresBin, startPostgres } from '../bench/postgres.js';
import { CLI } from './helpers/mcpClients.js';
import { makeHome, removeHome } from './helpers/server.js';
import { freePort, ServeProcess } from './helpers/serveProcess.js';

const exec = promisify(execFile);

describe.skipIf(!postgresBin())('stopping backyard serve after its PostgreSQL went away', () => {
  it('logs that it stopped uncleanly and why, and exits with 1 without a stack trace', async () => {
    const cluster = await startPostgres({ database: 'backyard' });
    const home = makeHome();
    try {
      const env = { ...process.env, BACKYARD_HOME: home, BACKYARD_LOG_LEVEL: 'info', BACKYARD_DATABASE_URL: cluster.url };
      const token = (await exec(process.execPath, [CLI, 'account', 'create', 'gone'], { env })).stdout.trim();
      const server = new ServeProcess(await freePort(), token, () => env);
      let log = '';
      await server.serve([], { stderr: (text) => (log += text) });
      expect((await fetch(`${server.url}/healthz`)).ok).toBe(true);

      cluster.stop();
      const code = await server.stop('SIGTERM');

      expect(log).toContain('stopping: finishing requests in flight');
      expect(log).toMatch(/stopped, but not cleanly: .*PostgreSQL/);
      // A crash prints the error's frames, each on a line of its own; the log writes one JSON object per line.
      expect(log).not.toMatch(/^\s+at /m);
      expect(code).toBe(1);
    } finally {
      cluster.stop();
      removeHome(home);
    }
  }, 120_000);
});

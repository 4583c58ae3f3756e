#!/usr/bin/env node
import { Command, Option } from 'commander';
import { loadConfig, type ConfigOverrides } from './config.js';
import { createLogger } from './log.js';
import { runStdioMcp } from './mcp/stdio.js';
import { openPlatform, type Platform } from './platform/platform.js';
import { startHttpServer } from './server/http.js';
import { packageVersion } from './version.js';

const program = new Command();
program
  .name('backyard')
  .description('A self-hosted application platform that AI assistants drive through MCP tools.')
  .version(packageVersion())
  .addOption(new Option('--home <folder>', 'state folder').env('BACKYARD_HOME'))
  .showHelpAfterError();

const settings = (extra: ConfigOverrides = {}) => loadConfig({ home: program.opts().home, ...extra });

/** Opens the home's platform for one short command, and closes it whatever happens. */
function withPlatform(body: (platform: Platform) => void): void {
  const config = settings();
  const platform = openPlatform(config, createLogger(config.logLevel));
  try {
    body(platform);
  } finally {
    platform.close();
  }
}

/** Runs a command body, turning expected failures into one line on stderr and exit code 1. */
const run =
  <A extends unknown[]>(body: (...args: A) => Promise<void> | void) =>
  async (...args: A) => {
    try {
      await body(...args);
    } catch (error) {
      // Config, domain and start-up failures are all reported the same way: one line, exit code 1.
      process.stderr.write(`backyard: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    }
  };

program
  .command('serve')
  .description('run the HTTP server: management API (/v1), MCP (/mcp), data API, dashboard')
  .option('-p, --port <port>', 'TCP port (env BACKYARD_PORT, default 4000)')
  .option('-H, --host <address>', 'address to bind (env BACKYARD_HOST, default 127.0.0.1)')
  .action(
    run(async (opts: { port?: string; host?: string }) => {
      const config = settings({ port: opts.port, host: opts.host });
      const log = createLogger(config.logLevel);
      const platform = openPlatform(config, log);
      platform.services.accounts.ensure(config.account);
      const server = await startHttpServer(platform, { port: config.port, host: config.host });
      const stop = async (signal: string) => {
        log.info({ signal }, 'stopping: finishing requests in flight');
        await server.close();
        platform.close();
        process.exit(0);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
    }),
  );

program
  .command('mcp')
  .description('serve MCP over stdio for a desktop client (as BACKYARD_ACCOUNT, default "local")')
  .action(
    run(async () => {
      const config = settings();
      await runStdioMcp(config, createLogger(config.logLevel));
      process.exit(0);
    }),
  );

const account = program.command('account').description('manage accounts');
account
  .command('create <login>')
  .description('create an account and print its bearer token (shown once)')
  .action(
    run((login: string) =>
      withPlatform((platform) => {
        const { token } = platform.services.accounts.create(login);
        process.stdout.write(`${token}\n`);
      }),
    ),
  );
account
  .command('token <login>')
  .description('print a new bearer token for an existing account (earlier tokens keep working)')
  .action(
    run((login: string) =>
      withPlatform((platform) => {
        const found = platform.services.accounts.findByLogin(login);
        if (!found) throw new Error(`No account has the login "${login}". Create it with: backyard account create ${login}`);
        process.stdout.write(`${platform.services.accounts.issueToken(found.id, 'user')}\n`);
      }),
    ),
  );
account
  .command('list')
  .description('list accounts')
  .action(
    run(() =>
      withPlatform((platform) => {
        for (const a of platform.services.accounts.list()) process.stdout.write(`${a.login}\t${a.createdAt}\n`);
      }),
    ),
  );

const app = program.command('app').description('Backend Apps');
app
  .command('keys <appId>')
  .description('print every key of a Backend App, the master key included')
  .action(
    run((appId: string) =>
      withPlatform((platform) => {
        const keys = platform.services.backendApps.keys(appId);
        if (!keys) throw new Error(`No Backend App has the application id "${appId}".`);
        for (const [name, value] of Object.entries(keys)) process.stdout.write(`${name}\t${value}\n`);
      }),
    ),
  );

app
  .command('import')
  .description('create a Backend App with the application id and keys of an existing Parse app (keys not given are generated)')
  .requiredOption('--account <login>', 'account that owns the app')
  .requiredOption('--name <name>', 'app name')
  .requiredOption('--app-id <id>', 'application id')
  .requiredOption('--master-key <key>', 'master key')
  .option('--rest-key <key>')
  .option('--javascript-key <key>')
  .option('--client-key <key>')
  .option('--dotnet-key <key>')
  .option('--webhook-key <key>')
  .option('--file-key <key>')
  .action(
    run((opts: Record<string, string | undefined>) =>
      withPlatform((platform) => {
        const owner = platform.services.accounts.findByLogin(opts.account!);
        if (!owner) throw new Error(`No account has the login "${opts.account}".`);
        const created = platform.services.backendApps.create(owner.id, opts.name!, {
          applicationId: opts.appId,
          masterKey: opts.masterKey,
          restKey: opts.restKey,
          javascriptKey: opts.javascriptKey,
          clientKey: opts.clientKey,
          dotnetKey: opts.dotnetKey,
          webhookKey: opts.webhookKey,
          fileKey: opts.fileKey,
        });
        process.stdout.write(`${created.appId}\n`);
      }),
    ),
  );

await program.parseAsync(process.argv);

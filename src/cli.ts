#!/usr/bin/env node
// First: V8's settings, before any other module runs (heapFlags.ts says why).
import './heapFlags.js';
import { Command, Option } from 'commander';
import { loadConfig, type ConfigOverrides } from './config.js';
import { createLogger } from './log.js';
import { runStdioMcp } from './mcp/stdio.js';
import { openPlatform, type Platform } from './platform/platform.js';
import { findRunningServer } from './server/http.js';
import { scheduleCommands } from './cliSchedules.js';
import { startBackyard } from './serve.js';
import { SIGN_IN_LINK_TTL_MS, signInLink } from './platform/dashboard/sessions.js';
import { dockerClient, engineFailure } from './platform/devenvs/engine.js';
import { DEBIAN_IMAGE, DEBIAN_PACKAGES, buildDebianImage } from './platform/devenvs/debianImage.js';
import { BUSYBOX_PATH, OFFLINE_IMAGE, buildOfflineImage } from './platform/devenvs/offlineImage.js';
import { packageVersion } from './version.js';
import { parseRepoSlug } from './platform/repohost/names.js';
import { parseAssignments, readSettingsFile, settingLines } from './platform/backendapps/settingsText.js';
import { invokeOperation } from '../tools/invoke.js';
import { operationsByName } from '../tools/index.js';
import { FEATURES, type OperationName } from '../tools/operation.js';
import { askedProfile } from './mcp/profile.js';

const program = new Command();
program
  .name('backyard')
  .description('A self-hosted application platform that AI assistants drive through MCP tools.')
  .version(packageVersion())
  .addOption(new Option('--home <folder>', 'state folder').env('BACKYARD_HOME'))
  .showHelpAfterError();

const settings = (extra: ConfigOverrides = {}) => loadConfig({ home: program.opts().home, ...extra });

/** Opens the home's platform for one short command, and closes it whatever happens. */
async function withPlatform(body: (platform: Platform) => Promise<void> | void): Promise<void> {
  const config = settings();
  const platform = await openPlatform(config, createLogger(config.logLevel, config.logFormat));
  // No listener here: URLs written by these commands (an imported app's starting page) use the configured port.
  platform.services.urls.bindDefault(`http://localhost:${config.port}`);
  try {
    await body(platform);
  } finally {
    await platform.close();
  }
}

/**
 * Runs a lifecycle operation for the machine's owner, as the account that owns the resource (found
 * with `ownerOf`), through the operation itself: the same rules and texts as the API.
 * @throws Error when no resource has the id.
 */
async function actAsOwner(
  name: OperationName,
  input: Record<string, string>,
  ownerOf: (platform: Platform) => Promise<string | undefined>,
  what: string,
): Promise<Record<string, unknown>> {
  const config = settings();
  const platform = await openPlatform(config, createLogger(config.logLevel, config.logFormat));
  platform.services.urls.bindDefault(`http://localhost:${config.port}`);
  try {
    const ownerId = await ownerOf(platform);
    const account = ownerId === undefined ? undefined : (await platform.services.accounts.list()).find((a) => a.id === ownerId);
    if (!account) throw new Error(`No ${what} has the id "${Object.values(input)[0]}".`);
    return await invokeOperation(operationsByName[name], input, { account, services: platform.services });
  } finally {
    await platform.close();
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
  .option('--role <role>', 'all, data or platform: what this node serves (env BACKYARD_ROLE, default all; data and platform need BACKYARD_DATABASE_URL)')
  .action(
    run(async (opts: { port?: string; host?: string; role?: string }) => {
      const config = settings({ port: opts.port, host: opts.host, role: opts.role });
      // One server per home: a second one would fight over the apps' databases. With the
      // apps on PostgreSQL, several serve the same home and database.
      const running = config.databaseUrl ? undefined : await findRunningServer(config.home);
      if (running) {
        throw new Error(
          `A Backyard is already serving ${config.home} at ${running.url} (pid ${running.pid}). Use that one (backyard mcp forwards to it), stop it first, or give this one another BACKYARD_HOME.`,
        );
      }
      const log = createLogger(config.logLevel, config.logFormat);
      const platform = await openPlatform(config, log);
      await platform.services.accounts.ensure(config.account);
      try {
        await platform.checkStorage();
      } catch (error) {
        await platform.close();
        throw error;
      }
      let server: Awaited<ReturnType<typeof startBackyard>>;
      try {
        server = await startBackyard(platform, { port: config.port, host: config.host });
      } catch (error) {
        await platform.close();
        if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          throw new Error(`Port ${config.port} on ${config.host} is taken by another program. Pick a free one with --port <port> or BACKYARD_PORT.`);
        }
        throw error;
      }
      // A failure while stopping (the database gone) is logged as what it is, not thrown as a crash.
      const stop = async (signal: string) => {
        log.info({ signal }, 'stopping: finishing requests in flight');
        let failure: unknown;
        await server.close().catch((error: unknown) => (failure = error));
        await platform.close().catch((error: unknown) => (failure ??= error));
        if (failure === undefined) process.exit(0);
        log.error(`stopped, but not cleanly: ${failure instanceof Error ? failure.message : String(failure)}`);
        process.exit(1);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
    }),
  );

program
  .command('mcp')
  .description('serve MCP over stdio for a desktop client (as BACKYARD_ACCOUNT, default "local")')
  .option('--read-only', 'offer only tools that change nothing')
  .option('--features <groups>', `offer only these tool groups, comma-separated: ${FEATURES.join(', ')}`)
  .option('--app <appId>', 'reach only this Backend App')
  .action(
    run(async (options: { readOnly?: boolean; features?: string; app?: string }) => {
      const config = settings();
      const profile = askedProfile(options, { readOnly: '--read-only', features: '--features', app: '--app' });
      if ('problem' in profile) throw new Error(profile.problem);
      await runStdioMcp(config, createLogger(config.logLevel, config.logFormat), { start: startBackyard, findRunning: findRunningServer }, profile);
      process.exit(0);
    }),
  );

program
  .command('dashboard')
  .description('print a one-time link that signs BACKYARD_ACCOUNT (default "local") in to the web dashboard')
  .action(
    run(async () => {
      const config = settings();
      const running = await findRunningServer(config.home);
      await withPlatform(async (platform) => {
        const base = running?.url ?? config.publicUrl ?? `http://localhost:${config.port}`;
        process.stdout.write(`${await signInLink(platform.services, config.account, base)}\n`);
        const minutes = SIGN_IN_LINK_TTL_MS / 60_000;
        process.stderr.write(
          running
            ? `Open the link within ${minutes} minutes; it works once.\n`
            : `No Backyard is serving this home yet: start it with \`backyard serve\`, then open the link within ${minutes} minutes; it works once.\n`,
        );
      });
    }),
  );

const account = program.command('account').description('manage accounts');
account
  .command('create <login>')
  .description('create an account and print its bearer token (shown once)')
  .action(
    run((login: string) =>
      withPlatform(async (platform) => {
        const { token } = await platform.services.accounts.create(login);
        process.stdout.write(`${token}\n`);
      }),
    ),
  );
account
  .command('token <login>')
  .description('print a new bearer token for an existing account (earlier tokens keep working)')
  .option('--read-only', 'the token calls only operations that change nothing')
  .option('--app <appId>', 'the token reaches only this Backend App of the account')
  .action(
    run((login: string, options: { readOnly?: boolean; app?: string }) =>
      withPlatform(async (platform) => {
        const found = await platform.services.accounts.findByLogin(login);
        if (!found) throw new Error(`No account has the login "${login}". Create it with: backyard account create ${login}`);
        if (options.app !== undefined && !await platform.services.backendApps.get(found.id, options.app)) {
          throw new Error(`The account ${login} has no Backend App with appId "${options.app}". See them in the dashboard or with getBackendApps.`);
        }
        const limits = { readOnly: options.readOnly === true, appId: options.app ?? null };
        process.stdout.write(`${await platform.services.accounts.issueToken(found.id, 'user', limits)}\n`);
      }),
    ),
  );
account
  .command('list')
  .description('list accounts')
  .action(
    run(() =>
      withPlatform(async (platform) => {
        for (const a of await platform.services.accounts.list()) process.stdout.write(`${a.login}\t${a.createdAt}\n`);
      }),
    ),
  );

account
  .command('link <login>')
  .description('link a GitHub account (user or organisation) to a Backyard account, for repository access tokens')
  .requiredOption('--github <githubLogin>', 'the GitHub login the account may mint tokens for')
  .action(
    run((login: string, opts: { github: string }) =>
      withPlatform(async (platform) => {
        const found = await platform.services.accounts.findByLogin(login);
        if (!found) throw new Error(`No account has the login "${login}".`);
        await platform.services.repoHost.githubLinks.link(found.id, opts.github);
        if (!platform.services.repoHost.github) {
          process.stderr.write('Note: no GitHub App is configured (BACKYARD_GITHUB_APP_ID and a private key); the link takes effect once one is.\n');
        }
      }),
    ),
  );
account
  .command('unlink <login>')
  .description('remove a GitHub account link')
  .requiredOption('--github <githubLogin>', 'the linked GitHub login')
  .action(
    run((login: string, opts: { github: string }) =>
      withPlatform(async (platform) => {
        const found = await platform.services.accounts.findByLogin(login);
        if (!found) throw new Error(`No account has the login "${login}".`);
        if (!await platform.services.repoHost.githubLinks.unlink(found.id, opts.github)) {
          throw new Error(`The GitHub account "${opts.github}" is not linked to "${login}".`);
        }
      }),
    ),
  );
account
  .command('links <login>')
  .description('list the GitHub accounts linked to an account')
  .action(
    run((login: string) =>
      withPlatform(async (platform) => {
        const found = await platform.services.accounts.findByLogin(login);
        if (!found) throw new Error(`No account has the login "${login}".`);
        for (const github of await platform.services.repoHost.githubLinks.list(found.id)) process.stdout.write(`github\t${github}\n`);
      }),
    ),
  );

const repo = program.command('repo').description('repositories of the built-in git host');
repo
  .command('create <owner/repo>')
  .description('create a bare repository (default branch main) and print its address')
  .action(
    run(async (slug: string) => {
      const parsed = parseRepoSlug(slug);
      if (!parsed) throw new Error(`"${slug}" is not <owner>/<repo>: the owner is an account login, the name 1 to 100 letters, digits, dots, dashes or underscores.`);
      const config = settings();
      const platform = await openPlatform(config, createLogger(config.logLevel, config.logFormat));
      platform.services.urls.bindDefault(`http://localhost:${config.port}`);
      try {
        const { created, repository } = await platform.services.repoHost.builtin.create(parsed.owner, parsed.repo);
        if (!created) throw new Error(`The repository ${repository.owner}/${repository.repo} already exists.`);
        process.stdout.write(`${platform.services.repoHost.publicUrl(repository.owner, repository.repo)}\n`);
      } finally {
        await platform.close();
      }
    }),
  );
repo
  .command('list [owner]')
  .description('list repositories with their addresses')
  .action(
    run((owner: string | undefined) =>
      withPlatform(async (platform) => {
        const host = platform.services.repoHost;
        for (const r of host.builtin.list(owner)) process.stdout.write(`${r.owner}/${r.repo}\t${host.publicUrl(r.owner, r.repo)}\n`);
      }),
    ),
  );

const app = program.command('app').description('Backend Apps');
app
  .command('keys <appId>')
  .description('print every key of a Backend App, the master key included')
  .action(
    run((appId: string) =>
      withPlatform(async (platform) => {
        const keys = await platform.services.backendApps.keys(appId);
        if (!keys) throw new Error(`No Backend App has the application id "${appId}".`);
        for (const [name, value] of Object.entries(keys)) process.stdout.write(`${name}\t${value}\n`);
      }),
    ),
  );

app
  .command('config <appId> [settings...]')
  .description(
    "print a Backend App's server options (Parse Server's names), or set them with key=value (JSON when it parses, else text; key=null restores the default); all or nothing. A running server applies a change within a second",
  )
  .action(
    run((appId: string, assignments: string[]) =>
      withPlatform(async (platform) => {
        const apps = platform.services.backendApps;
        if (!await apps.serverSettings(appId)) throw new Error(`No Backend App has the application id "${appId}".`);
        const { settings } = assignments.length ? await apps.configure(appId, parseAssignments(assignments)) : (await apps.serverSettings(appId))!;
        process.stdout.write(settingLines(settings));
      }),
    ),
  );

app
  .command('import')
  .description('create a Backend App with the application id and keys of an existing Parse app (keys not given are generated), and its server options')
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
  .option('--config <file.json>', "server options in Parse Server's shape, e.g. {\"maxLimit\": 1000, \"fileUpload\": {\"enableForPublic\": true}}")
  .option('--set <key=value>', 'a server option, as backyard app config takes it (repeatable; after --config)', (v: string, all: string[]) => [...all, v], [] as string[])
  .action(
    run((opts: Record<string, string | undefined> & { set: string[] }) =>
      withPlatform(async (platform) => {
        const owner = await platform.services.accounts.findByLogin(opts.account!);
        if (!owner) throw new Error(`No account has the login "${opts.account}".`);
        const settings = { ...(opts.config ? readSettingsFile(opts.config) : {}), ...parseAssignments(opts.set) };
        const created = await platform.services.backendApps.create(owner.id, opts.name!, {
          applicationId: opts.appId,
          masterKey: opts.masterKey,
          restKey: opts.restKey,
          javascriptKey: opts.javascriptKey,
          clientKey: opts.clientKey,
          dotnetKey: opts.dotnetKey,
          webhookKey: opts.webhookKey,
          fileKey: opts.fileKey,
        }, settings);
        process.stdout.write(`${created.appId}\n`);
      }),
    ),
  );

scheduleCommands(app, { run, withPlatform, home: () => settings().home });

app
  .command('delete <appId>')
  .description('delete a Backend App for good: its record and keys, data, files, cloud code and hosting subdomain')
  .action(
    run(async (appId: string) => {
      await actAsOwner('deleteBackendApp', { appId }, (p) => p.services.backendApps.owner(appId), 'Backend App');
      process.stdout.write(`deleted\t${appId}\n`);
    }),
  );

const webapp = program.command('webapp').description('Web Apps');
for (const [verb, name, description] of [
  ['stop', 'stopWebApp', 'stop a Web App\'s container (its appURL stops answering)'],
  ['start', 'startWebApp', 'start a stopped Web App again'],
  ['delete', 'deleteWebApp', 'delete a Web App for good: containers, images, deployments, logs and subdomain'],
] as const) {
  webapp
    .command(`${verb} <appId>`)
    .description(description)
    .action(
      run(async (appId: string) => {
        const result = await actAsOwner(name, { appId }, (p) => p.services.webApps.ownerOf(appId), 'Web App');
        process.stdout.write(`${verb === 'delete' ? 'deleted' : String(result.status)}\t${appId}\n`);
      }),
    );
}

const env = program.command('env').description('development environments');
env
  .command('delete <id>')
  .description('delete a development environment for good: its running commands, container, /workspace volume and executions')
  .action(
    run(async (id: string) => {
      await actAsOwner('deleteDevelopmentEnvironment', { developmentEnvironmentId: id }, (p) => p.services.devenvs.ownerOf(id), 'development environment');
      process.stdout.write(`deleted\t${id}\n`);
    }),
  );

const image = program.command('image').description('development environment images');
image
  .command('build-offline')
  .description(
    `build ${DEBIAN_IMAGE}, the image Backyard falls back to when it cannot pull its configured one: Debian's debootstrap minbase ` +
      `with ${DEBIAN_PACKAGES.join(', ')}, from the mirror apt uses here (needs root and the debootstrap package; a few minutes). ` +
      `With --busybox: ${OFFLINE_IMAGE}, a 2 MB BusyBox image from Debian's busybox-static, with a shell but no package manager`,
  )
  .option('--busybox [file]', `build the BusyBox image instead, from a statically linked busybox (default ${BUSYBOX_PATH})`)
  .option('--tag <image>', `image reference to build (default ${DEBIAN_IMAGE}, or ${OFFLINE_IMAGE} with --busybox)`)
  .action(
    run(async (opts: { busybox?: string | true; tag?: string }) => {
      const config = settings();
      const docker = dockerClient(config.dockerHost);
      const onProgress = (line: string) => process.stderr.write(`${line}\n`);
      if (opts.busybox) {
        const tag = opts.tag ?? OFFLINE_IMAGE;
        try {
          const built = await buildOfflineImage(docker, { busybox: opts.busybox === true ? BUSYBOX_PATH : opts.busybox, image: tag, onProgress });
          process.stdout.write(`${built.image}\t${built.id}\t${built.applets} applets\n`);
          process.stderr.write(`Use it with BACKYARD_DEVENV_IMAGE=${built.image}\n`);
        } catch (error) {
          throw engineFailure(error, `import the image ${tag}`, config.dockerHost);
        }
        return;
      }
      const tag = opts.tag ?? DEBIAN_IMAGE;
      try {
        const built = await buildDebianImage(docker, { image: tag, onProgress });
        process.stdout.write(`${built.image}\t${built.id}\t${built.operatingSystem}\t${Math.round(built.ms / 1000)} s\n`);
        if (tag === DEBIAN_IMAGE) process.stderr.write('Backyard uses it by itself when its configured image cannot be pulled.\n');
      } catch (error) {
        throw engineFailure(error, `build the image ${tag}`, config.dockerHost);
      }
    }),
  );

await program.parseAsync(process.argv);

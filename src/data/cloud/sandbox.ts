import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../log.js';
import { createEgressProxy } from './egress.js';

/**
 * The kernel's confinement of cloud code workers, through
 * bubblewrap (`bwrap`, Debian's `bubblewrap` package): each worker runs in new user, pid, ipc, uts,
 * cgroup, mount and network namespaces, with every capability dropped and a root file system that
 * holds only `/usr` (read-only), an empty `/tmp`, its own `/proc` and `/dev`, and, read-only, the
 * worker script, the SDK's `node_modules` and the app's own cloud tree. So it cannot see or signal
 * another process (its pid namespace holds only itself), open the Docker socket or any host file, or
 * reach a host port: its network namespace has only its own loopback. Two Unix sockets are bound in:
 * the data API (`DATA_SOCKET`), answered by the same handler as Backyard's `/data`, and, unless cloud
 * networking is off, the egress proxy (`EGRESS_SOCKET`, egress.ts) that opens tunnels to public
 * addresses only. The worker's `fetch` goes through them (worker.cts).
 */

/** Where the data API socket appears inside the sandbox. */
export const DATA_SOCKET = '/run/backyard/data.sock';
/** Where the egress proxy socket appears inside the sandbox (absent with BACKYARD_CLOUD_NETWORK=none). */
export const EGRESS_SOCKET = '/run/backyard/egress.sock';

/** How workers are confined: in the bubblewrap sandbox, or by Node's permission model alone. */
export type ConfinementMode = 'sandbox' | 'none';

/** The bwrap options that make the namespaces and the base file system (no binds of Backyard's own). */
function baseArgs(): string[] {
  const args = [
    '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--unshare-net',
    '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    '--ro-bind', '/usr', '/usr', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
  ];
  // Merged-/usr systems link these into /usr; others have them as folders.
  for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64']) {
    try {
      const stat = fs.lstatSync(top);
      if (stat.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(top), top);
      else if (stat.isDirectory()) args.push('--ro-bind', top, top);
    } catch {
      // not on this system
    }
  }
  const nodeDir = path.dirname(fs.realpathSync(process.execPath));
  if (!nodeDir.startsWith('/usr/')) args.push('--ro-bind', nodeDir, nodeDir);
  if (fs.existsSync('/etc/localtime')) args.push('--ro-bind', '/etc/localtime', '/etc/localtime');
  return args;
}

/**
 * Whether a sandbox can be made on this machine: runs `node -e 0` in one. Undefined when it can,
 * else why not (bwrap missing, user namespaces off, …), for the log line said once at start.
 */
export function sandboxUnavailable(): string | undefined {
  const result = spawnSync('bwrap', [...baseArgs(), '--', process.execPath, '-e', '0'], { encoding: 'utf8', timeout: 10_000 });
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap' : `bwrap could not run (${code ?? result.error.message})`;
  }
  if (result.status !== 0) return `bwrap could not make a sandbox here (${(result.stderr || `exit ${result.status}`).trim()}; user namespaces may be off)`;
  return undefined;
}

/**
 * The argv of `bwrap` that starts `command` in a sandbox.
 * @param readable absolute real paths bound read-only at the same place (files or folders)
 * @param sockets host paths of the data API socket and, when networking is on, the egress socket
 * @param links `[target, link]` pairs: symbolic links made in the sandbox (a `node_modules` that is a
 *   link to a bound folder, as in a git worktree sharing its main checkout's: module resolution looks there)
 */
export function sandboxArgv(readable: readonly string[], sockets: { data: string; egress?: string }, command: readonly string[], links: ReadonlyArray<readonly [string, string]> = []): string[] {
  const args = baseArgs();
  for (const p of readable) {
    const bare = p.length > 1 && p.endsWith(path.sep) ? p.slice(0, -1) : p;
    args.push('--ro-bind', bare, bare);
  }
  for (const [target, link] of links) args.push('--symlink', target, link);
  args.push('--bind', sockets.data, DATA_SOCKET);
  if (sockets.egress) args.push('--bind', sockets.egress, EGRESS_SOCKET);
  args.push('--chdir', '/', '--', ...command);
  return args;
}

/** A handler of data API requests, given the target below `/data` (as the front's `DataHandler`). */
export type SandboxDataHandler = (req: IncomingMessage, res: ServerResponse, target: string) => void;

/**
 * The two Unix sockets every sandbox gets, served by this process in a private folder (mode 0700):
 * `data.sock` passes `/data/...` requests to the data API handler (`attach` sets it once the HTTP
 * front exists; until then such requests answer 503), and `egress.sock` is the egress proxy.
 */
export class SandboxSockets {
  readonly dir: string;
  readonly data: string;
  readonly egress: string | undefined;
  private handler: SandboxDataHandler | undefined;
  private readonly servers: http.Server[] = [];
  private readonly listening: Promise<unknown>;

  /** @throws Error when the folder cannot be made. */
  constructor(options: { network: 'public' | 'none'; allow: readonly string[]; log: Logger }) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-cloud-'));
    fs.chmodSync(this.dir, 0o700);
    this.data = path.join(this.dir, 'data.sock');
    const dataServer = http.createServer((req, res) => {
      const url = req.url ?? '/';
      if (!this.handler || !(url === '/data' || url.startsWith('/data/') || url.startsWith('/data?'))) {
        res.writeHead(this.handler ? 404 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 1, error: this.handler ? 'Only the data API is served here.' : 'The data API is not served by this Backyard process yet.' }));
        return;
      }
      this.handler(req, res, url.slice('/data'.length) || '/');
    });
    this.servers.push(dataServer);
    const listens = [new Promise((resolve, reject) => dataServer.once('error', reject).listen(this.data, () => resolve(undefined)))];
    if (options.network === 'public') {
      this.egress = path.join(this.dir, 'egress.sock');
      const egressServer = createEgressProxy({ allow: options.allow, log: options.log });
      this.servers.push(egressServer);
      listens.push(new Promise((resolve, reject) => egressServer.once('error', reject).listen(this.egress, () => resolve(undefined))));
    }
    this.listening = Promise.all(listens);
  }

  /** Resolves once both sockets accept connections. @throws Error when one cannot listen. */
  ready(): Promise<unknown> {
    return this.listening;
  }

  /** Serves the data API on `data.sock` with `handler` (the same one as the HTTP front's `/data`). */
  attach(handler: SandboxDataHandler): void {
    this.handler = handler;
  }

  /** Stops listening and removes the folder. */
  close(): void {
    for (const server of this.servers) {
      server.close();
      server.closeAllConnections();
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

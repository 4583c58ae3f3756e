import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { CLI, modernHttpClient, type AnyMcpClient } from './mcpClients.js';

/** A free TCP port on loopback (probed, then released). */
export const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/**
 * A real `backyard serve` child process on a fixed port, started and stopped as the restart suites
 * need: `start()` waits for `/healthz` and connects an MCP client over HTTP with `token`; `stop()`
 * closes the client and sends a signal (SIGTERM: a clean stop; SIGKILL: a crash).
 */
export class ServeProcess {
  private child: ChildProcess | undefined;
  private client: AnyMcpClient | undefined;

  /** @param env the environment of each start (called each time, so it may change between starts). */
  constructor(
    readonly port: number,
    private readonly token: string,
    private readonly env: () => NodeJS.ProcessEnv,
  ) {}

  get url(): string {
    return `http://localhost:${this.port}`;
  }

  /** The process id of the started process (to read its memory in /proc). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether a started process has not exited yet. */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server and connects an MCP client over HTTP. @throws as `serve`. */
  async start(): Promise<AnyMcpClient> {
    await this.serve();
    return (this.client = await modernHttpClient(this.url, this.token));
  }

  /**
   * Starts the server alone (a data node has no `/mcp`), with `args` after `serve --port <port>`.
   * @param options.nodeArgs Node's own options before the CLI (`--trace-gc-nvp`...).
   * @param options.stdout receives the server's standard output as text (ignored without it).
   * @param options.stderr receives its standard error (its log) as text (this process's own without it).
   * @throws Error when the server does not answer within 60 s (a loaded machine starts Node slowly) or exits first.
   */
  async serve(args: string[] = [], options: { nodeArgs?: string[]; stdout?: (text: string) => void; stderr?: (text: string) => void } = {}): Promise<void> {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'serve', '--port', String(this.port), ...args], {
      env: this.env(),
      stdio: ['ignore', options.stdout ? 'pipe' : 'ignore', options.stderr ? 'pipe' : 'inherit'],
    });
    if (options.stdout) child.stdout!.setEncoding('utf8').on('data', options.stdout);
    if (options.stderr) child.stderr!.setEncoding('utf8').on('data', options.stderr);
    this.child = child;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && child.exitCode === null) {
      try {
        if ((await fetch(`${this.url}/healthz`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('backyard serve did not start');
  }

  /** Closes the MCP client, signals the process and waits for it to exit: its exit code (null when a signal ended it). */
  async stop(signal: NodeJS.Signals): Promise<number | null> {
    await this.client?.close().catch(() => undefined);
    this.client = undefined;
    const proc = this.child!;
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill(signal);
    return exited;
  }
}

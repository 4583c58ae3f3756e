import fs from 'node:fs';
import net from 'node:net';

/** Hosts a test browser may reach: loopback only, whatever name the page used for it. */
function loopbackTarget(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || name === '127.0.0.1') return '127.0.0.1';
  if (name === '::1') return '::1';
  return null;
}

/** Reads exactly `length` bytes from the front of what has arrived, waiting for more when short. */
class ByteReader {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended = false;

  constructor(private readonly socket: net.Socket) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onEnd);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    this.waiting?.();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.waiting?.();
  };

  async byte(): Promise<number> {
    return (await this.read(1)).readUInt8(0);
  }

  async read(length: number): Promise<Buffer> {
    while (this.buffered.length < length) {
      if (this.ended) throw new Error('SOCKS client went away mid-handshake');
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = null;
    }
    const bytes = this.buffered.subarray(0, length);
    this.buffered = this.buffered.subarray(length);
    return bytes;
  }

  /** Stops reading and hands back what arrived past the handshake. */
  detach(): Buffer {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onEnd);
    return this.buffered;
  }
}

const IPV6_LOOPBACK = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
const REPLY_SUCCEEDED = 0x00;
const REPLY_NOT_ALLOWED = 0x02;
const REPLY_REFUSED = 0x05;
const REPLY_COMMAND_NOT_SUPPORTED = 0x07;

function reply(socket: net.Socket, code: number): void {
  socket.write(Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]));
}

/** One SOCKS5 conversation (RFC 1928, no authentication, CONNECT only), then a plain byte pipe. */
async function serveClient(client: net.Socket): Promise<void> {
  const reader = new ByteReader(client);
  const version = await reader.byte();
  if (version !== 0x05) throw new Error(`not SOCKS5 (version byte ${version})`);
  await reader.read(await reader.byte());
  client.write(Buffer.from([0x05, 0x00]));
  const [, command, , addressType] = await reader.read(4);
  let host: string;
  if (addressType === 0x01) host = [...(await reader.read(4))].join('.');
  else if (addressType === 0x03) host = (await reader.read(await reader.byte())).toString('latin1');
  else if (addressType === 0x04) host = (await reader.read(16)).equals(IPV6_LOOPBACK) ? '::1' : 'not loopback';
  else throw new Error(`unknown SOCKS address type ${addressType}`);
  const port = (await reader.read(2)).readUInt16BE(0);
  if (command !== 0x01) return reply(client, REPLY_COMMAND_NOT_SUPPORTED);
  const target = loopbackTarget(host);
  if (!target) return reply(client, REPLY_NOT_ALLOWED);
  const upstream = net.connect(port, target);
  let connected = false;
  upstream.once('error', () => {
    if (!connected) reply(client, REPLY_REFUSED);
    client.destroy();
  });
  upstream.once('connect', () => {
    connected = true;
    reply(client, REPLY_SUCCEEDED);
    const early = reader.detach();
    if (early.length > 0) upstream.write(early);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
}

/**
 * A SOCKS5 server on a unix socket at `socketPath` that connects only to loopback ports of this
 * machine (`localhost`, `*.localhost`, 127.0.0.1, ::1; anything else is refused with reply 0x02).
 * It is how a browser in a network namespace of its own (see `launchBrowser`) reaches the servers a
 * test started, while never seeing this namespace's interfaces come and go.
 * @returns the listening server; `close()` it when the browser is gone.
 */
export async function startLoopbackSocks(socketPath: string): Promise<net.Server> {
  fs.rmSync(socketPath, { force: true });
  const server = net.createServer((client) => {
    client.on('error', () => client.destroy());
    serveClient(client).catch(() => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return server;
}

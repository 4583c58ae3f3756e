// Runs inside a network namespace of its own (test/helpers/browser.ts starts it through
// chromium-netns.sh): Docker creating bridges and veths on the host is an IP address change that makes
// Chromium fail every request in flight with net::ERR_NETWORK_CHANGED; in here there is nothing to change.
// Brings loopback up, gives the namespace one more interface that never changes (a veth pair with
// both ends in here, addressed from TEST-NET-1 with no IPv6 autoconfiguration) so that pages see
// navigator.onLine as on any connected machine, relays 127.0.0.1:<BACKYARD_BROWSER_RELAY_PORT> to the SOCKS server's unix socket
// outside (BACKYARD_BROWSER_SOCKS), then runs Chromium with Playwright's pipes (fds 3 and 4).
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';

const [chromium, ...args] = process.argv.slice(2);
const socksPath = process.env.BACKYARD_BROWSER_SOCKS;
const relayPort = Number(process.env.BACKYARD_BROWSER_RELAY_PORT);

const ip = (...words) => execFileSync('ip', words);
ip('link', 'set', 'lo', 'up');
ip('link', 'add', 'backyard0', 'type', 'veth', 'peer', 'name', 'backyard1');
for (const end of ['backyard0', 'backyard1']) ip('link', 'set', end, 'addrgenmode', 'none');
ip('addr', 'add', '192.0.2.1/24', 'dev', 'backyard0');
for (const end of ['backyard0', 'backyard1']) ip('link', 'set', end, 'up');
const relay = net.createServer((inside) => {
  const outside = net.connect(socksPath);
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
  inside.pipe(outside).pipe(inside);
});
relay.listen(relayPort, '127.0.0.1', () => {
  const browser = spawn(chromium, args, { stdio: [0, 1, 2, 3, 4] });
  browser.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => browser.kill(signal));
});

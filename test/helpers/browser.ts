import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { startLoopbackSocks } from './loopbackSocks.js';

/** Debian's Chromium (package `chromium`); `.ci/run` installs it. `BACKYARD_CHROMIUM` points elsewhere. */
export const CHROMIUM_PATH = process.env.BACKYARD_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags that let Chromium run headless as root on a machine with no outside network: no sandbox, no
 * GPU, and none of its background connections (they are refused here, many at a time).
 * `*.localhost` is mapped to loopback explicitly so hosted sites resolve whatever the resolver does.
 */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP *.localhost 127.0.0.1',
];

/** The port, inside the browser's own network namespace, of the relay to the SOCKS server outside. */
const RELAY_PORT = 1080;
const NETNS_LAUNCHER = fileURLToPath(new URL('./chromium-netns.sh', import.meta.url));

/** Where tests save screenshots (git-ignored). */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/**
 * Launches headless Chromium through playwright-core (a fresh temporary profile each time), in a
 * network namespace of its own: other suites starting containers change this machine's interfaces,
 * and Chromium fails requests in flight on such a change (net::ERR_NETWORK_CHANGED, seen in CI).
 * The browser reaches this machine's loopback ports, and nothing else, through a SOCKS5 proxy on a
 * unix socket (`loopbackSocks.ts`); pages still use `localhost` and `*.localhost` addresses as usual.
 * Never skips: without Chromium the calling test fails with a message saying how to install it.
 * @throws Error when Chromium is not installed at `CHROMIUM_PATH`.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: browser tests need Debian's chromium package. ` +
        'Install it as root with `apt-get update && apt-get install -y --no-install-recommends chromium` (.ci/run does this).',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-browser-'));
  const socksPath = path.join(dir, 'socks.sock');
  const socks = await startLoopbackSocks(socksPath);
  const release = (): void => {
    socks.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const browser = await chromium.launch({
      executablePath: NETNS_LAUNCHER,
      headless: true,
      args: [...CHROMIUM_FLAGS, `--proxy-server=socks5://127.0.0.1:${RELAY_PORT}`, '--proxy-bypass-list=<-loopback>'],
      env: {
        ...process.env,
        BACKYARD_BROWSER_NODE: process.execPath,
        BACKYARD_BROWSER_CHROMIUM: CHROMIUM_PATH,
        BACKYARD_BROWSER_SOCKS: socksPath,
        BACKYARD_BROWSER_RELAY_PORT: String(RELAY_PORT),
      },
      timeout: 60_000,
    });
    browser.on('disconnected', release);
    return browser;
  } catch (error) {
    release();
    throw error;
  }
}

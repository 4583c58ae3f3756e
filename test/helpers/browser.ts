import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

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

/** Where tests save screenshots (git-ignored). */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/**
 * Launches headless Chromium through playwright-core (a fresh temporary profile each time).
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
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS, timeout: 60_000 });
}

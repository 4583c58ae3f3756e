import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import tar from 'tar-stream';
import type { DockerClient } from './engine.js';
import { LABEL_IMAGE_OS, LABEL_IMAGE_PACKAGE_MANAGER } from './imageFacts.js';
import { importRootFolder } from './imageImport.js';

/**
 * `backyard image build-offline --busybox`: the smallest development environment
 * image, made from the static busybox of Debian's `busybox-static` package (docs/notes: a folder with
 * busybox and its applet links, piped as a tar stream into the engine's image import, is a working
 * image). It has a shell and BusyBox tools but no package manager, no `git` and no working HTTP client,
 * so Backyard never falls back to it (that is `debianImage.ts`); it stays because it builds in about a
 * second from a file already on Debian machines and weighs 2 MB, which makes it the image of the
 * tests that need only a shell, and the base of their test web apps (busybox `httpd`, `nc`).
 */

/** The BusyBox image's reference (the tests set it as BACKYARD_DEVENV_IMAGE). */
export const OFFLINE_IMAGE = 'backyard/devenv:offline';
/** The BusyBox image's `PRETTY_NAME` (its /etc/os-release and its label). */
export const BUSYBOX_OS = 'Backyard offline (BusyBox, no package manager)';
/** Where Debian's busybox-static installs its binary. */
export const BUSYBOX_PATH = '/bin/busybox';

/**
 * True when the ELF file at `file` is statically linked (no PT_INTERP program header), so that it
 * runs in an image holding nothing else. False for anything that is not a 64- or 32-bit ELF file.
 */
export function isStaticElf(file: string): boolean {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 52 || bytes.readUInt32BE(0) !== 0x7f454c46) return false;
  const is64 = bytes[4] === 2;
  const little = bytes[5] === 1;
  const u16 = (at: number) => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number) => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const phoff = is64 ? Number(little ? bytes.readBigUInt64LE(0x20) : bytes.readBigUInt64BE(0x20)) : u32(0x1c);
  const phentsize = u16(is64 ? 0x36 : 0x2a);
  const phnum = u16(is64 ? 0x38 : 0x2c);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 4 > bytes.length) return false;
    if (u32(at) === 3 /* PT_INTERP */) return false;
  }
  return true;
}

/** The applet paths busybox knows (`bin/sh`, `usr/bin/wget`, ...), from `busybox --list-full`. */
export function busyboxApplets(busybox: string): string[] {
  return execFileSync(busybox, ['--list-full'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().replace(/^\/+/, ''))
    .filter((l) => l !== '' && !l.includes('..'));
}

/**
 * The image's root folder as a tar stream: `/bin/busybox`, a symbolic link per applet, `/bin/sh`,
 * `/tmp` and `/var/tmp` (mode 1777), `/workspace`, `/root`, `/run`, `/home`, and `/etc/passwd`,
 * `/etc/group`, `/etc/os-release`.
 */
export function offlineRootTar(busyboxBytes: Buffer, applets: readonly string[]): tar.Pack {
  const pack = tar.pack();
  const mtime = new Date();
  const dirs = new Set(['bin', 'sbin', 'usr', 'usr/bin', 'usr/sbin', 'usr/local', 'usr/local/bin', 'etc', 'root', 'run', 'home', 'var', 'workspace', 'dev', 'proc', 'sys']);
  for (const applet of applets) {
    for (let d = path.posix.dirname(applet); d !== '.' && d !== '/'; d = path.posix.dirname(d)) dirs.add(d);
  }
  for (const dir of [...dirs].sort()) pack.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime });
  for (const tmp of ['tmp/', 'var/tmp/']) pack.entry({ name: tmp, type: 'directory', mode: 0o1777, mtime });
  pack.entry({ name: 'bin/busybox', mode: 0o755, mtime }, busyboxBytes);
  const links = new Set(applets.filter((a) => a !== 'bin/busybox'));
  links.add('bin/sh');
  for (const link of [...links].sort()) pack.entry({ name: link, type: 'symlink', linkname: '/bin/busybox', mode: 0o777, mtime });
  const text = (name: string, content: string) => pack.entry({ name, mode: 0o644, mtime }, Buffer.from(content));
  text('etc/passwd', 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n');
  text('etc/group', 'root:x:0:\nnogroup:x:65534:\n');
  text('etc/os-release', `NAME="Backyard offline development environment"\nID=busybox\nPRETTY_NAME="${BUSYBOX_OS}"\n`);
  pack.finalize();
  return pack;
}

export interface OfflineImageResult {
  image: string;
  /** The image id the engine gave (`sha256:…`). */
  id: string;
  applets: number;
}

/**
 * Builds `image` (default `backyard/devenv:offline`) from the static busybox at `busybox` through the
 * engine's image import (`POST /images/create?fromSrc=-`), replacing an older image of that name.
 * @throws Error when busybox is missing or not static (the message says to install `busybox-static`),
 *   or when the engine refuses the import.
 */
export async function buildOfflineImage(
  docker: DockerClient,
  options: { busybox?: string; image?: string; onProgress?: (line: string) => void } = {},
): Promise<OfflineImageResult> {
  const busybox = options.busybox ?? BUSYBOX_PATH;
  const image = options.image ?? OFFLINE_IMAGE;
  if (!fs.existsSync(busybox) || !isStaticElf(busybox)) {
    throw new Error(
      `${busybox} is ${fs.existsSync(busybox) ? 'not a statically linked program' : 'missing'}. ` +
        "Install Debian's busybox-static package (apt-get install busybox-static), then run this command again.",
    );
  }
  const applets = busyboxApplets(busybox);
  const root = offlineRootTar(fs.readFileSync(busybox), applets) as unknown as NodeJS.ReadableStream;
  const id = await importRootFolder(docker, root, image, {
    message: 'backyard image build-offline --busybox',
    changes: [`LABEL ${LABEL_IMAGE_PACKAGE_MANAGER}=none`, `LABEL ${LABEL_IMAGE_OS}="${BUSYBOX_OS}"`],
    onProgress: options.onProgress,
  });
  return { image, id, applets: applets.length };
}

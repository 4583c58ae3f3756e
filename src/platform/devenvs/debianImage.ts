import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostAptMirror, type AptMirror } from './aptSources.js';
import type { DockerClient } from './engine.js';
import { LABEL_IMAGE_OS, LABEL_IMAGE_PACKAGE_MANAGER } from './imageFacts.js';
import { importRootFolder } from './imageImport.js';

/**
 * Backyard's own development environment image for machines that cannot reach an image registry:
 * Debian's `debootstrap` minbase of the release apt uses here,
 * from the mirror apt uses here (docs/notes/docker.md: about 35 s on an idle machine, 344 MB), with
 * `git`, `curl`, CA certificates and Debian's `nodejs`, imported into the engine as `DEBIAN_IMAGE`.
 * apt works inside when the mirror is reachable from containers. The same image is the Node base
 * image that the Web App guide names when Backyard has it (`node_base_image`, urls.ts).
 */

/** The stable name of the image (the tag says how it was made, not which release: that is the host's). */
export const DEBIAN_IMAGE = 'backyard/devenv:debootstrap';
/** The packages added to the minbase variant. */
export const DEBIAN_PACKAGES = ['git', 'ca-certificates', 'curl', 'nodejs'] as const;
/** How long debootstrap may take at most. */
export const DEBOOTSTRAP_TIMEOUT_MS = 20 * 60_000;
/** Where debootstrap is looked for besides PATH (a non-root PATH often lacks the sbin folders). */
const SBIN_FOLDERS = ['/usr/sbin', '/sbin', '/usr/local/sbin'];

/** What to install when debootstrap is missing: part of every error that says so. */
export const DEBOOTSTRAP_MISSING =
  "debootstrap is not installed on the Backyard machine. Install it as root with `apt-get install -y debootstrap` (Debian's debootstrap package), then try again";

export interface DebianImageOptions {
  image?: string;
  /** The mirror and release; default: the first of apt's sources here (`hostAptMirror`). */
  mirror?: AptMirror;
  /** The debootstrap program; default: found on PATH or in the sbin folders. */
  debootstrap?: string;
  /** Each line debootstrap and the import print. */
  onProgress?: (line: string) => void;
}

export interface DebianImageResult {
  image: string;
  /** The image id the engine gave (`sha256:…`). */
  id: string;
  /** `PRETTY_NAME` of the built system, e.g. `Debian GNU/Linux 12 (bookworm)`. */
  operatingSystem: string;
  mirror: AptMirror;
  ms: number;
}

/**
 * Builds `DEBIAN_IMAGE` (or `options.image`): debootstrap into a temporary folder, removal of the
 * downloaded packages, then `tar` of the folder into the engine's image import; the folder is removed
 * whatever happens.
 * @throws Error (one or two sentences, saying what to do) when debootstrap is missing
 *   (`DEBOOTSTRAP_MISSING`), when not run as root, when no apt mirror is configured here, when
 *   debootstrap fails (its last lines included), or when the engine refuses the import.
 */
export async function buildDebianImage(docker: DockerClient, options: DebianImageOptions = {}): Promise<DebianImageResult> {
  const started = Date.now();
  const image = options.image ?? DEBIAN_IMAGE;
  const debootstrap = options.debootstrap ?? findProgram('debootstrap');
  if (!debootstrap || !fs.existsSync(debootstrap)) throw new Error(`${DEBOOTSTRAP_MISSING}.`);
  if (process.getuid?.() !== 0) {
    throw new Error('debootstrap must run as root to build the offline image: run `sudo backyard image build-offline` once (or start Backyard as root), then try again.');
  }
  const mirror = options.mirror ?? hostAptMirror();
  if (!mirror) {
    throw new Error('No Debian or Ubuntu mirror is configured for apt on this machine (/etc/apt/sources.list, /etc/apt/sources.list.d/), so debootstrap has nowhere to download from. Configure apt, then try again.');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-debootstrap-'));
  const root = path.join(dir, 'root');
  try {
    const args = [
      '--variant=minbase',
      `--include=${DEBIAN_PACKAGES.join(',')}`,
      ...(mirror.keyring ? [`--keyring=${mirror.keyring}`] : []),
      mirror.suite,
      root,
      mirror.uri,
    ];
    options.onProgress?.(`debootstrap ${args.join(' ')}`);
    await runLogged(debootstrap, args, DEBOOTSTRAP_TIMEOUT_MS, options.onProgress);
    for (const deb of fs.readdirSync(path.join(root, 'var/cache/apt/archives')).filter((f) => f.endsWith('.deb'))) {
      fs.rmSync(path.join(root, 'var/cache/apt/archives', deb));
    }
    const operatingSystem = prettyName(path.join(root, 'etc/os-release')) ?? `${mirror.suite}`;
    const tar = spawn('tar', ['--numeric-owner', '-C', root, '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let tarError = '';
    tar.stderr.on('data', (chunk: Buffer) => (tarError += chunk.toString()));
    const tarDone = new Promise<void>((resolve, reject) => {
      tar.on('error', reject);
      tar.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar of the root folder exited ${code}: ${tarError.trim()}`))));
    });
    options.onProgress?.(`importing the root folder as ${image}`);
    const [id] = await Promise.all([
      importRootFolder(docker, tar.stdout, image, {
        message: `backyard image build-offline: debootstrap --variant=minbase ${mirror.suite} ${mirror.uri}`,
        changes: [
          'ENV DEBIAN_FRONTEND=noninteractive',
          `LABEL ${LABEL_IMAGE_PACKAGE_MANAGER}=apt-get`,
          `LABEL ${LABEL_IMAGE_OS}="${operatingSystem.replace(/"/g, '')}"`,
        ],
        onProgress: options.onProgress,
      }),
      tarDone,
    ]);
    return { image, id, operatingSystem, mirror, ms: Date.now() - started };
  } finally {
    removeBuildFolder(dir, options.onProgress);
  }
}

/**
 * Removes the build folder, after unmounting what a failed debootstrap may have left mounted in it
 * (`/proc`, `/sys`, a bind of `/dev`): a recursive removal must never walk into the host's devices.
 * A folder that still holds a mount is left in place, and said so.
 */
function removeBuildFolder(dir: string, onProgress?: (line: string) => void): void {
  const mounted = () => mountPointsUnder(dir);
  for (const point of mounted()) spawnSyncQuiet('umount', ['-l', point]);
  const left = mounted();
  if (left.length > 0) {
    onProgress?.(`left ${dir} in place: ${left.join(', ')} could not be unmounted`);
    return;
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Mount points at or below `dir` (from /proc/self/mounts), deepest first. */
function mountPointsUnder(dir: string): string[] {
  let table = '';
  try {
    table = fs.readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  return table
    .split('\n')
    .map((line) => (line.split(' ')[1] ?? '').replace(/\\040/g, ' '))
    .filter((point) => point === dir || point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

const spawnSyncQuiet = (program: string, args: string[]) => spawnSync(program, args, { stdio: 'ignore' });

/** The full path of `name` on PATH or in the sbin folders, or undefined. */
export function findProgram(name: string, pathVariable = process.env.PATH ?? ''): string | undefined {
  for (const folder of [...pathVariable.split(path.delimiter).filter(Boolean), ...SBIN_FOLDERS]) {
    const candidate = path.join(folder, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** `PRETTY_NAME` of an os-release file, or undefined. */
function prettyName(file: string): string | undefined {
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(fs.readFileSync(file, 'utf8'));
    return m?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Runs `program` with its output lines sent to `onLine`; resolves when it exits 0.
 * @throws Error with its last lines when it exits otherwise or outlives `timeoutMs` (it is killed then).
 */
function runLogged(program: string, args: string[], timeoutMs: number, onLine?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const last: string[] = [];
    const take = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        last.push(line);
        if (last.length > 10) last.shift();
        onLine?.(line);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(program)} could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const why = signal ? `was killed (${signal}${signal === 'SIGKILL' ? `, after ${timeoutMs / 60_000} minutes at most` : ''})` : `exited ${code}`;
      reject(new Error(`${path.basename(program)} ${why}; its last lines:\n${last.join('\n')}`));
    });
  });
}

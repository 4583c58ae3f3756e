import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { ENGINE_TIMEOUTS, engineCall, type DockerClient } from './engine.js';

/**
 * What an assistant must know of the image its environment runs:
 * which image, which system, and how to install packages there. createDevelopmentEnvironment answers
 * it, and the guides are filled with it (urls.ts, `fillAddresses`).
 */
export interface ImageFacts {
  /** The image reference the environment's container runs, e.g. `alpine:3.20`. */
  image: string;
  /** `PRETTY_NAME` of the image's `/etc/os-release`, e.g. `Alpine Linux v3.20`, when known. */
  operatingSystem?: string;
  /** The package manager found in the image; absent when it has none (or it is not known yet). */
  packageManager?: PackageManager;
  /** How to install a package there, `<package>` standing for its names; absent with no package manager. */
  installCommand?: string;
}

/** Package managers Backyard recognises, in the order a probe looks for them. */
export const PACKAGE_MANAGERS = ['apk', 'apt-get', 'dnf', 'microdnf', 'yum', 'zypper', 'pacman'] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

/** The non-interactive install command of each package manager (`<package>`: the package names). */
export const INSTALL_COMMANDS: Readonly<Record<PackageManager, string>> = {
  apk: 'apk add <package>',
  // The lists baked into an image age: refresh them first, or a point release answers 404.
  'apt-get': 'apt-get update && apt-get install -y <package>',
  dnf: 'dnf install -y <package>',
  microdnf: 'microdnf install -y <package>',
  yum: 'yum install -y <package>',
  zypper: 'zypper --non-interactive install <package>',
  pacman: 'pacman -Sy --noconfirm <package>',
};

/** Labels Backyard puts on the images it builds, so that their facts need no probe. */
export const LABEL_IMAGE_OS = 'dev.backyard.image.os';
/** The image's package manager, or `none`. */
export const LABEL_IMAGE_PACKAGE_MANAGER = 'dev.backyard.image.package-manager';

/** `ImageFacts` from a package manager (undefined: none) and an operating system name. */
export function factsOf(image: string, packageManager: PackageManager | undefined, operatingSystem?: string): ImageFacts {
  return {
    image,
    ...(operatingSystem ? { operatingSystem } : {}),
    ...(packageManager ? { packageManager, installCommand: INSTALL_COMMANDS[packageManager] } : {}),
  };
}

/** The facts that Backyard's labels on an image state, or undefined for an image without them. */
export function factsFromLabels(image: string, labels: Readonly<Record<string, string>> | null | undefined): ImageFacts | undefined {
  const manager = labels?.[LABEL_IMAGE_PACKAGE_MANAGER];
  if (manager === undefined) return undefined;
  return factsOf(image, isPackageManager(manager) ? manager : undefined, labels?.[LABEL_IMAGE_OS]);
}

/**
 * A guess from the reference alone, for text written before the image could be looked at:
 * `alpine` → apk, `debian`/`ubuntu` → apt-get, `fedora`/`rockylinux`/`almalinux`/`centos` → dnf;
 * anything else has no package manager that is known.
 */
export function guessFacts(image: string): ImageFacts {
  const name = image.split('/').pop()!.split(/[:@]/)[0]!;
  const tag = image.split('/').pop()!.split(/[:@]/)[1] ?? '';
  if (name === 'alpine' || tag.includes('alpine')) return factsOf(image, 'apk');
  if (['debian', 'ubuntu'].includes(name)) return factsOf(image, 'apt-get');
  if (['fedora', 'rockylinux', 'almalinux', 'centos'].includes(name)) return factsOf(image, 'dnf');
  return { image };
}

/** The shell script of `probeFacts`: prints `os=<PRETTY_NAME>` and a `pm=<name>` line per package manager found. */
export const PROBE_SCRIPT =
  '[ -r /etc/os-release ] && . /etc/os-release; echo "os=${PRETTY_NAME:-}"; ' +
  `for m in ${PACKAGE_MANAGERS.join(' ')}; do command -v "$m" >/dev/null 2>&1 && echo "pm=$m"; done; true`;

/** Reads what `PROBE_SCRIPT` printed: the first package manager found, and the system's name. */
export function parseProbe(image: string, output: string): ImageFacts {
  let operatingSystem: string | undefined;
  let manager: PackageManager | undefined;
  for (const line of output.split(/\r?\n/)) {
    if (line.startsWith('os=') && line.length > 3) operatingSystem = line.slice(3).trim();
    const pm = line.startsWith('pm=') ? line.slice(3).trim() : undefined;
    if (pm && !manager && isPackageManager(pm)) manager = pm;
  }
  return factsOf(image, manager, operatingSystem);
}

/**
 * Looks inside an image: runs `PROBE_SCRIPT` in a throwaway container of `image` (no network, removed
 * at once) and reads its answer (`parseProbe`).
 * @throws ManagementError(unavailable) when the engine is unreachable or refuses; Error when the image
 *   has no `sh`.
 */
export async function probeFacts(docker: DockerClient, dockerHost: string | undefined, image: string): Promise<ImageFacts> {
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const [result, container] = (await engineCall(dockerHost, `look inside the image ${image}`, ENGINE_TIMEOUTS.lifecycle, () =>
    docker.run(image, ['sh', '-c', PROBE_SCRIPT], output, { Tty: true, HostConfig: { NetworkMode: 'none', AutoRemove: false } }),
  )) as [{ StatusCode: number }, Docker.Container];
  await container.remove({ force: true }).catch(() => undefined);
  if (result.StatusCode !== 0) throw new Error(`the image ${image} has no working sh (the probe exited ${result.StatusCode}): ${text.trim()}`);
  return parseProbe(image, text);
}

/**
 * The command that installs `packages` (space-separated names) with `facts`' package manager; with
 * none, a command that says so on stderr and fails, so that a guide's step stays a valid command.
 */
export function installPackagesCommand(facts: ImageFacts, packages: string): string {
  if (!facts.installCommand) return `echo 'the image ${facts.image} has no package manager: ${packages} cannot be installed' >&2; false`;
  return facts.installCommand.replace('<package>', packages);
}

const isPackageManager = (name: string): name is PackageManager => (PACKAGE_MANAGERS as readonly string[]).includes(name);

import Docker from 'dockerode';
import { LABEL_ENVIRONMENT, homeFilter, networkHomeFilter } from '../../src/platform/devenvs/labels.js';
import { OFFLINE_IMAGE } from '../../src/platform/devenvs/offlineImage.js';

/**
 * Support for the Docker suites (test/devenvs*.test.ts): they run against the real engine that
 * `scripts/ensure-docker` starts (npm test calls it first), and fail when none answers, unless
 * BACKYARD_SKIP_DOCKER=1 is set by hand.
 */
export const SKIP_DOCKER = process.env.BACKYARD_SKIP_DOCKER === '1';
if (SKIP_DOCKER) console.warn('BACKYARD_SKIP_DOCKER=1: the Docker suites (development environments) are skipped.');

/** The engine the tests use: DOCKER_HOST or the default socket, as Backyard itself. */
export const docker = new Docker();

/** Server settings of the Docker suites: the offline image, a short wait, small limits. */
export const DEVENV_ENV = {
  BACKYARD_DEVENV_IMAGE: OFFLINE_IMAGE,
  BACKYARD_EXEC_WAIT_MS: '3000',
  BACKYARD_DEVENV_MEMORY_MB: '128',
  BACKYARD_DEVENV_PIDS: '128',
  BACKYARD_DEVENV_CPUS: '1',
} as const;

/**
 * Fails (never skips) when no engine answers or an image is missing (default: the BusyBox image), with
 * what to do.
 */
export async function requireDocker(...images: string[]): Promise<void> {
  try {
    await Promise.race([docker.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s')), 5000))]);
  } catch (error) {
    throw new Error(
      `No Docker engine answers (${(error as Error).message}). Run "bash scripts/ensure-docker" (npm test does), or set BACKYARD_SKIP_DOCKER=1 to skip the Docker suites.`,
    );
  }
  for (const image of images.length ? images : [OFFLINE_IMAGE]) {
    try {
      await docker.getImage(image).inspect();
    } catch {
      throw new Error(`The image ${image} is missing. Run "bash scripts/ensure-docker", which builds it.`);
    }
  }
}

/**
 * Removes every container and volume of development environments created by the Backyard of `home`,
 * then the home's account networks that no container uses any more (`removeNetworks`).
 */
export async function removeDevenvs(home: string): Promise<void> {
  const filters = homeFilter(home);
  for (const c of await docker.listContainers({ all: true, filters })) {
    await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
  }
  const { Volumes } = await docker.listVolumes({ filters });
  for (const v of Volumes ?? []) await docker.getVolume(v.Name).remove().catch(() => undefined);
  await removeNetworks(home);
}

/**
 * Removes the account networks of `home` (by their labels); one that a container still uses (a Web App
 * not removed yet) stays, for the other helper to remove after its containers.
 */
export async function removeNetworks(home: string): Promise<void> {
  for (const n of await docker.listNetworks({ filters: networkHomeFilter(home) })) {
    await docker.getNetwork(n.Id).remove().catch(() => undefined);
  }
}

/** The containers of one environment, by its label. */
export async function containersOf(environmentId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${LABEL_ENVIRONMENT}=${environmentId}`] } });
}

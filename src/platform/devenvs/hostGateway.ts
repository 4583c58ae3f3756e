import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { ENGINE_TIMEOUTS, engineCall, type DockerClient } from './engine.js';

/**
 * The name containers reach Backyard by: every development
 * environment gets it in its `/etc/hosts` through the engine's `host-gateway`, the host's address on
 * Docker's default bridge, which containers on any bridge network reach through their own gateway.
 */
export const CONTAINER_HOST_NAME = 'backyard.internal';

/** The `ExtraHosts` entry that maps `CONTAINER_HOST_NAME` to the host (Docker Engine 20.10 and later). */
export const CONTAINER_HOST_ENTRY = `${CONTAINER_HOST_NAME}:host-gateway`;

/**
 * The IPv4 address the engine gives `host-gateway`, read where containers read it: the `/etc/hosts`
 * of a throwaway container of `image` (no network, removed at once). Docker does not promise an IPAM
 * `Gateway` entry for its bridge (Debian's engine 20.10 lists only the subnet), so that is not read.
 * @returns undefined when the engine maps the name to nothing usable (a remote engine, Docker Desktop's VM).
 * @throws ManagementError(unavailable) when the engine is unreachable or refuses.
 */
export async function hostGatewayAddress(docker: DockerClient, dockerHost: string | undefined, image: string): Promise<string | undefined> {
  const output = new PassThrough();
  let hosts = '';
  output.on('data', (chunk: Buffer) => (hosts += chunk.toString('latin1')));
  const [result, container] = (await engineCall(dockerHost, 'read the host gateway address', ENGINE_TIMEOUTS.lifecycle, () =>
    docker.run(image, ['cat', '/etc/hosts'], output, { Tty: true, HostConfig: { NetworkMode: 'none', ExtraHosts: [CONTAINER_HOST_ENTRY], AutoRemove: false } }),
  )) as [{ StatusCode: number }, Docker.Container];
  await container.remove({ force: true }).catch(() => undefined);
  if (result.StatusCode !== 0) return undefined;
  for (const line of hosts.split(/\r?\n/)) {
    const [address, ...names] = line.trim().split(/\s+/);
    if (address && names.includes(CONTAINER_HOST_NAME) && /^\d+\.\d+\.\d+\.\d+$/.test(address)) return address;
  }
  return undefined;
}

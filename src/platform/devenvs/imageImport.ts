import type { DockerClient } from './engine.js';
import { LABEL_MANAGED } from './labels.js';

/** The `PATH` of Backyard's own images. */
export const IMAGE_PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Imports a root folder, given as a tar stream, as the image `image` (`repo[:tag]`) through the
 * engine's image import (`POST /images/create?fromSrc=-`; docs/notes/docker.md), replacing an older
 * image of that name. Every image gets `ENV PATH`, `WORKDIR /workspace`, `CMD ["/bin/sh"]` and the
 * managed label, then `changes` (more Dockerfile instructions).
 * @returns the image id the engine gave (`sha256:…`).
 * @throws Error when the engine refuses the import (its message included).
 */
export async function importRootFolder(
  docker: DockerClient,
  root: NodeJS.ReadableStream,
  image: string,
  options: { changes?: readonly string[]; message: string; onProgress?: (line: string) => void },
): Promise<string> {
  const [repo, tag] = splitReference(image);
  const stream = (await docker.importImage(root, {
    repo,
    tag,
    changes: [`ENV ${IMAGE_PATH_ENV}`, 'WORKDIR /workspace', 'CMD ["/bin/sh"]', `LABEL ${LABEL_MANAGED}=true`, ...(options.changes ?? [])],
    message: options.message,
  } as object)) as NodeJS.ReadableStream;
  const events = await new Promise<Array<{ status?: string; error?: string }>>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: unknown, output: Array<{ status?: string; error?: string }>) => (error ? reject(error) : resolve(output ?? [])),
      (event: { status?: string }) => {
        if (event.status) options.onProgress?.(event.status);
      },
    );
  });
  const failed = events.find((e) => e.error);
  if (failed) throw new Error(`The Docker engine refused the image import: ${failed.error}`);
  return (await docker.getImage(image).inspect()).Id;
}

/** `repo[:tag]` → `[repo, tag]`, the tag defaulting to `latest` (a registry port is not a tag). */
export function splitReference(image: string): [string, string] {
  const colon = image.lastIndexOf(':');
  if (colon > image.lastIndexOf('/')) return [image.slice(0, colon), image.slice(colon + 1)];
  return [image, 'latest'];
}

import type { Readable } from 'node:stream';
import type { DockerClient } from '../devenvs/engine.js';
import { DeployError, engineReason, engineStep } from './engine.js';
import type { LogRow } from './store.js';

/** One event of the engine's build progress stream (the legacy builder's JSON lines). */
interface BuildEvent {
  stream?: string;
  status?: string;
  progress?: string;
  id?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

export interface BuildOptions {
  /** `repo:tag` given to the image. */
  tag: string;
  /** The whole build may take this long. */
  timeoutMs: number;
  /** Aborts the build (Backyard stopping). */
  signal?: AbortSignal;
  /** Called for each build log row as it comes ("build logs stored as rows"). */
  onLog: (row: LogRow) => void;
}

/** Split lines at most this long are kept whole; longer ones are cut (a minified file printed by RUN). */
const MAX_LINE = 4000;

/**
 * Builds a deployment's image on the Docker engine from a tar context (`POST /build`, the legacy
 * builder: docs in `/work/shared/notes/docker.md`), turning the progress stream into log rows of
 * source `build`: each output line, pull statuses, and the engine's error last.
 */
export class ImageBuilder {
  constructor(
    private readonly docker: DockerClient,
    private readonly dockerHost: string | undefined,
  ) {}

  /**
   * @returns the image id (`sha256:…`).
   * @throws DeployError with the engine's error (e.g. "The command '/bin/sh -c false' returned a
   *   non-zero code: 1"), or saying that the build took too long or the engine is unreachable.
   */
  async build(context: Readable, options: BuildOptions): Promise<string> {
    const controller = new AbortController();
    const abort = () => controller.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs);
    const emit = (message: string) => options.onLog({ source: 'build', message: message.length > MAX_LINE ? `${message.slice(0, MAX_LINE)}…` : message, time: new Date().toISOString() });
    let imageId: string | undefined;
    let failure: string | undefined;
    try {
      const stream = (await this.docker.buildImage(context as unknown as NodeJS.ReadableStream, {
        t: options.tag,
        rm: true,
        forcerm: true,
        abortSignal: controller.signal,
      } as object)) as NodeJS.ReadableStream;
      await new Promise<void>((resolve, reject) => {
        let partial = '';
        this.docker.modem.followProgress(
          stream,
          (error: unknown) => {
            if (partial.trim()) emit(partial.trimEnd());
            return error ? reject(error) : resolve();
          },
          (event: BuildEvent) => {
            if (typeof event.stream === 'string') {
              const lines = (partial + event.stream).split('\n');
              partial = lines.pop() ?? '';
              for (const line of lines) if (line.trim() !== '') emit(line.replace(/\r$/, ''));
            } else if (event.error) {
              failure = event.errorDetail?.message ?? event.error;
              emit(failure);
            } else if (event.aux?.ID) {
              imageId = event.aux.ID;
            } else if (event.status && !event.progress) {
              emit(event.id ? `${event.id}: ${event.status}` : event.status);
            }
          },
        );
      });
    } catch (error) {
      if (timedOut) throw new DeployError(`the image build did not finish within ${Math.round(options.timeoutMs / 1000)} s (BACKYARD_WEBAPP_BUILD_TIMEOUT_MS).`);
      if (options.signal?.aborted) throw new DeployError('Backyard stopped while the image was being built.');
      throw new DeployError(engineReason(error, 'build the image', this.dockerHost));
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
    }
    if (failure !== undefined) throw new DeployError(`${failure.trim().replace(/\.$/, '')}. The last build log rows show the failing instruction.`);
    if (imageId === undefined) {
      const inspected = await engineStep(this.dockerHost, 'inspect the built image', 30_000, () => this.docker.getImage(options.tag).inspect());
      imageId = inspected.Id;
    }
    return imageId;
  }

  /**
   * The lowest TCP port the image `EXPOSE`s, or undefined when it exposes none.
   * @throws DeployError when the engine cannot be asked.
   */
  async exposedPort(imageId: string): Promise<number | undefined> {
    const info = await engineStep(this.dockerHost, 'inspect the built image', 30_000, () => this.docker.getImage(imageId).inspect());
    const ports = Object.keys(info.Config?.ExposedPorts ?? {})
      .filter((p) => p.endsWith('/tcp') || !p.includes('/'))
      .map((p) => Number.parseInt(p, 10))
      .filter((p) => Number.isInteger(p) && p > 0 && p < 65536)
      .sort((a, b) => a - b);
    return ports[0];
  }

  /**
   * Removes a deployment's image tag; the image itself goes with its last tag. An image still used by
   * a container, or gone, is left alone (never forced: a later deployment of the same content shares it).
   */
  async remove(tag: string): Promise<void> {
    await this.docker
      .getImage(tag)
      .remove({ force: false, noprune: false })
      .catch(() => undefined);
  }

  /** Removes every tag of an image repository (a deleted Web App's images), leaving images other tags still hold. */
  async removeRepository(repository: string): Promise<void> {
    const images = await this.docker.listImages({ filters: { reference: [repository] } } as object);
    for (const image of images) {
      for (const tag of image.RepoTags ?? []) if (tag.startsWith(`${repository}:`)) await this.remove(tag);
    }
  }
}

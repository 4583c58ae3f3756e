import type { Logger } from '../../log.js';
import { unavailable } from '../../errors.js';
import { ENGINE_TIMEOUTS, engineCall, engineMessage, engineStatus, isUnreachable, notReachableText, type DockerClient } from './engine.js';
import { OFFLINE_IMAGE } from './offlineImage.js';

/**
 * Makes sure the development environment image is on the engine, pulling it on first use with its
 * progress in the log (issue 5, "The image"). Concurrent callers share one pull.
 */
export class ImageProvider {
  private pulling = new Map<string, Promise<void>>();

  constructor(
    private readonly docker: DockerClient,
    private readonly dockerHost: string | undefined,
    private readonly log: Logger,
  ) {}

  /**
   * Resolves once `image` is present on the engine.
   * @throws ManagementError(unavailable) when the engine is unreachable, or the pull fails; the text of
   *   a failed pull says that the registry may be unreachable and names `backyard image build-offline`.
   */
  async ensure(image: string): Promise<void> {
    const present = await engineCall(this.dockerHost, `inspect the image ${image}`, ENGINE_TIMEOUTS.request, async (abortSignal) => {
      try {
        await this.docker.getImage(image).inspect({ abortSignal } as object);
        return true;
      } catch (error) {
        if (engineStatus(error) === 404) return false;
        throw error;
      }
    });
    if (present) return;
    let pull = this.pulling.get(image);
    if (!pull) {
      pull = this.pull(image).finally(() => this.pulling.delete(image));
      this.pulling.set(image, pull);
    }
    await pull;
  }

  private async pull(image: string): Promise<void> {
    this.log.info({ image }, 'pulling the development environment image');
    const started = Date.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(new Error(`it did not finish within ${ENGINE_TIMEOUTS.pull / 60_000} minutes`));
        }, ENGINE_TIMEOUTS.pull);
        this.docker.pull(image, { abortSignal: controller.signal }, (error: unknown, stream?: NodeJS.ReadableStream) => {
          if (error || !stream) return reject(error ?? new Error('the engine sent no progress stream'));
          let lastLog = 0;
          this.docker.modem.followProgress(
            stream,
            (finished: unknown, events: Array<{ error?: string }>) => {
              const failed = events?.find((e) => e.error);
              if (finished || failed) reject(finished ?? new Error(failed!.error));
              else resolve();
            },
            (event: { status?: string; id?: string; progress?: string }) => {
              // Progress: at most one line a second, plus every status change without a progress bar.
              const now = Date.now();
              if (!event.progress || now - lastLog > 1000) {
                lastLog = now;
                this.log.info({ image, layer: event.id, status: event.status, progress: event.progress }, 'image pull');
              }
            },
          );
        });
      });
      this.log.info({ image, ms: Date.now() - started }, 'image pulled');
    } catch (error) {
      if (isUnreachable(error)) throw unavailable(notReachableText(this.dockerHost, error));
      throw unavailable(
        `The development environment image "${image}" is not on the Docker engine and could not be pulled (${engineMessage(error)}); ` +
          'this machine may have no access to an image registry. ' +
          `Build an offline image with \`backyard image build-offline\` and start Backyard with BACKYARD_DEVENV_IMAGE=${OFFLINE_IMAGE}, ` +
          'or pull the image by hand (docker pull) where a registry can be reached.',
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

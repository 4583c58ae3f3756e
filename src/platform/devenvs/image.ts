import type { Logger } from '../../log.js';
import { ManagementError, unavailable } from '../../errors.js';
import { DEBIAN_IMAGE, buildDebianImage } from './debianImage.js';
import { ENGINE_TIMEOUTS, engineCall, engineMessage, engineStatus, isUnreachable, notReachableText, type DockerClient } from './engine.js';
import { factsFromLabels, guessFacts, probeFacts, type ImageFacts } from './imageFacts.js';

/** How long a caller waits for the offline image's build before it is told to come back (the build goes on). */
export const BUILD_WAIT_MS = 45_000;

/** The Node base image the Web App guide names when Backyard has no local one (`ImageProvider.nodeBaseImage`). */
export const REGISTRY_NODE_IMAGE = 'node:20-alpine';

/** The image Backyard builds by itself when the configured one cannot be had, and how. */
export interface FallbackImage {
  image: string;
  build: (onProgress: (line: string) => void) => Promise<unknown>;
}

/**
 * Makes sure a development environment image is on the engine: the configured image (`BACKYARD_DEVENV_IMAGE`, default `alpine:3.20`),
 * pulled on first use with its progress in the log; when it is absent and cannot be pulled, Backyard's
 * own Debian image (`debianImage.ts`), built once with debootstrap (progress in the log) and reused
 * afterwards, with no setting to change. Concurrent callers share one pull and one build. The choice
 * holds for the life of the process, so that a machine with no registry is not asked again at each
 * environment.
 */
export class ImageProvider {
  private choice: string | undefined;
  private resolving: Promise<string> | undefined;
  private building: { promise: Promise<void>; startedAt: number } | undefined;
  private readonly facts = new Map<string, ImageFacts>();
  private readonly present = new Set<string>();

  /**
   * @param fallback the image built when the configured one cannot be had (default: `DEBIAN_IMAGE`,
   *   by debootstrap); tests give another.
   * @param buildWaitMs how long `ensure` waits for that build before it answers that the build goes on.
   */
  constructor(
    private readonly docker: DockerClient,
    private readonly dockerHost: string | undefined,
    private readonly log: Logger,
    readonly configured: string,
    private readonly fallback: FallbackImage = { image: DEBIAN_IMAGE, build: (onProgress) => buildDebianImage(docker, { onProgress }) },
    private readonly buildWaitMs = BUILD_WAIT_MS,
  ) {}

  /**
   * The image to run, present on the engine: the configured one (pulled when missing), or else the
   * fallback (built when missing).
   * @throws ManagementError(unavailable) when the engine is unreachable; when neither image can be had
   *   (the text says why the pull failed and what the build needs, such as installing debootstrap);
   *   or when the build is still going after `buildWaitMs` (the text says to call again in a minute).
   */
  async ensure(): Promise<string> {
    const target = this.choice ?? this.configured;
    if (await this.has(target)) {
      this.choice = target;
      return target;
    }
    this.resolving ??= this.resolve(target).finally(() => (this.resolving = undefined));
    return this.resolving;
  }

  /**
   * What an assistant needs to know of `image` (on the engine): from Backyard's labels on its own
   * images, else by looking inside it once (`probeFacts`); remembered per reference.
   * @throws ManagementError(unavailable) when the engine is unreachable or refuses.
   */
  async factsOf(image: string): Promise<ImageFacts> {
    const known = this.facts.get(image);
    if (known) return known;
    const labelled = factsFromLabels(image, await this.labels(image));
    const facts = labelled ?? (await probeFacts(this.docker, this.dockerHost, image));
    this.facts.set(image, facts);
    return facts;
  }

  /**
   * The best knowledge, without waiting, of the image environments run, for text written for
   * assistants (guides): the image chosen, once one is; before that, the fallback when `survey` found
   * it on the engine and the configured image missing; else the configured image. Its facts are
   * those found (`factsOf`, `survey`), else a guess from the name (`guessFacts`).
   */
  current(): ImageFacts {
    const image =
      this.choice ?? (!this.present.has(this.configured) && this.present.has(this.fallback.image) ? this.fallback.image : this.configured);
    return this.facts.get(image) ?? guessFacts(image);
  }

  /**
   * The base image the Web App guide names for a Node app: Backyard's own image when the engine has
   * it (it holds Debian's nodejs and builds with no registry), else `REGISTRY_NODE_IMAGE`.
   */
  nodeBaseImage(): string {
    return this.present.has(this.fallback.image) ? this.fallback.image : REGISTRY_NODE_IMAGE;
  }

  /**
   * Looks, without pulling or building anything, which of the configured and the fallback image the
   * engine has, and reads their labels, so that `current` and `nodeBaseImage` are right before the
   * first environment is made. Never throws (a failure is logged at debug level).
   */
  async survey(): Promise<void> {
    await Promise.all(
      [this.configured, this.fallback.image].map(async (image) => {
        try {
          const labels = await this.labels(image);
          const facts = factsFromLabels(image, labels);
          if (facts) this.facts.set(image, facts);
        } catch (error) {
          this.log.debug({ err: error, image }, 'could not look for a development environment image');
        }
      }),
    );
  }

  /** True when the engine has `image` (remembered for `current` and `nodeBaseImage`). */
  private async has(image: string): Promise<boolean> {
    return (await this.labels(image)) !== undefined;
  }

  /**
   * The labels of `image` (`{}` when it has none), or undefined when the engine does not have it;
   * whether it has it is remembered.
   * @throws ManagementError(unavailable) when the engine is unreachable or refuses.
   */
  private async labels(image: string): Promise<Record<string, string> | undefined> {
    const labels = await engineCall(this.dockerHost, `inspect the image ${image}`, ENGINE_TIMEOUTS.request, async (abortSignal) => {
      try {
        const info = await this.docker.getImage(image).inspect({ abortSignal } as object);
        return info.Config?.Labels ?? {};
      } catch (error) {
        if (engineStatus(error) === 404) return undefined;
        throw error;
      }
    });
    if (labels) this.present.add(image);
    else this.present.delete(image);
    return labels;
  }

  private async resolve(target: string): Promise<string> {
    let pullFailure: string | undefined;
    if (target === this.configured) {
      try {
        await this.pull(target);
        this.present.add(target);
        this.choice = target;
        return target;
      } catch (error) {
        if (isUnreachable(error)) throw unavailable(notReachableText(this.dockerHost, error));
        pullFailure = engineMessage(error);
        this.log.warn({ image: target, reason: pullFailure, fallback: this.fallback.image }, 'the development environment image cannot be pulled: using Backyard\'s offline image instead');
      }
    }
    const pulled = pullFailure !== undefined ? `The development environment image "${target}" is not on the Docker engine and could not be pulled (${pullFailure}); ` : '';
    try {
      await this.fallbackPresent();
    } catch (error) {
      if (error instanceof ManagementError) throw error;
      if (error instanceof BuildInProgress) throw unavailable(`${pulled}Backyard's offline image ${this.fallback.image} is being built in its place: ${error.message}.`);
      const why = (error instanceof Error ? error.message : String(error)).replace(/\.?$/, '.');
      throw unavailable(`${pulled}Backyard's offline image ${this.fallback.image}, which it uses in its place, could not be built: ${why}`);
    }
    this.choice = this.fallback.image;
    return this.fallback.image;
  }

  /** Builds the fallback when the engine lacks it: one build for every caller, waited for `buildWaitMs` at most. */
  private async fallbackPresent(): Promise<void> {
    if (await this.has(this.fallback.image)) return;
    this.building ??= this.startBuild();
    const { promise, startedAt } = this.building;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      promise.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.buildWaitMs))),
    ]).finally(() => clearTimeout(timer));
    if (!done) {
      const seconds = Math.round((Date.now() - startedAt) / 1000);
      throw new BuildInProgress(
        `the build started ${seconds} s ago and takes a few minutes, the first time only (its progress is in Backyard's log). Call createDevelopmentEnvironment again in a minute`,
      );
    }
  }

  private startBuild(): { promise: Promise<void>; startedAt: number } {
    const image = this.fallback.image;
    const startedAt = Date.now();
    this.log.info({ image }, 'building the offline development environment image (once; a few minutes)');
    let lastLog = 0;
    const promise = this.fallback
      .build((line) => {
        // Progress: at most one line every 2 seconds.
        const now = Date.now();
        if (now - lastLog < 2000) return;
        lastLog = now;
        this.log.info({ image, progress: line }, 'offline image build');
      })
      .then(() => {
        this.present.add(image);
        this.facts.delete(image);
        this.log.info({ image, ms: Date.now() - startedAt }, 'offline development environment image built');
      })
      .catch((error: unknown) => {
        this.log.error({ image, reason: error instanceof Error ? error.message : String(error) }, 'the offline development environment image could not be built');
        throw error;
      })
      .finally(() => (this.building = undefined));
    promise.catch(() => undefined); // a caller that stopped waiting must not leave the rejection unhandled
    return { promise, startedAt };
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
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The build goes on; the caller is told to come back (its text is the reason part of the answer). */
class BuildInProgress extends Error {}

/**
 * The development environment image: Backyard falls back by
 * itself to an image it builds, once for all concurrent callers, tells a caller to come back while
 * the build goes on, says what to install when debootstrap is missing; what an image holds is read
 * from its labels or by looking inside; the mirror comes from apt's sources; guides get the image's
 * name and install command. The fallback's real build (debootstrap, minutes) is left to
 * scripts/ensure-docker, which the suites that use it need; here a stub tags the BusyBox image.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagementError } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import { mirrorFromSources } from '../src/platform/devenvs/aptSources.js';
import { DEBIAN_IMAGE, buildDebianImage } from '../src/platform/devenvs/debianImage.js';
import { ImageProvider, REGISTRY_NODE_IMAGE, type FallbackImage } from '../src/platform/devenvs/image.js';
import { guessFacts, installPackagesCommand, parseProbe, probeFacts } from '../src/platform/devenvs/imageFacts.js';
import { BUSYBOX_OS, OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { PublicUrls, fillAddresses } from '../src/platform/urls.js';
import { SKIP_DOCKER, docker, requireDocker } from './helpers/devenvs.js';

const log = createLogger('silent');
/** An image reference no registry has (the pull fails at once here, and anywhere with a registry). */
const UNPULLABLE = 'backyard-test/never-published:none';

/** A fallback whose "build" tags the BusyBox image under `image`, after `gate` (if any) opens; counts its builds. */
function stubFallback(image: string, gate?: Promise<void>): FallbackImage & { builds: number } {
  const stub = {
    image,
    builds: 0,
    build: async () => {
      stub.builds++;
      await gate;
      const [repo, tag] = image.split(':');
      await docker.getImage(OFFLINE_IMAGE).tag({ repo, tag });
    },
  };
  return stub;
}

const removeImage = (image: string) => docker.getImage(image).remove().catch(() => undefined);

describe.skipIf(SKIP_DOCKER)('the image provider (real Docker engine)', () => {
  const tags = [1, 2, 3].map((n) => `backyard-test/fallback-${process.pid}:${n}`);
  beforeAll(async () => {
    await requireDocker();
    await Promise.all(tags.map(removeImage));
  });
  afterAll(async () => {
    await Promise.all(tags.map(removeImage));
  });

  it('uses the configured image when the engine has it, building nothing', async () => {
    const fallback = stubFallback(tags[0]!);
    const provider = new ImageProvider(docker, undefined, log, OFFLINE_IMAGE, fallback);
    expect(await provider.ensure()).toBe(OFFLINE_IMAGE);
    expect(fallback.builds).toBe(0);
  });

  it('falls back when the configured image cannot be pulled: one build for concurrent callers, then reused', async () => {
    const fallback = stubFallback(tags[0]!);
    const provider = new ImageProvider(docker, undefined, log, UNPULLABLE, fallback);
    expect(provider.nodeBaseImage()).toBe(REGISTRY_NODE_IMAGE);
    const chosen = await Promise.all([provider.ensure(), provider.ensure(), provider.ensure()]);
    expect(chosen).toEqual([tags[0], tags[0], tags[0]]);
    expect(fallback.builds).toBe(1);
    expect(await provider.ensure()).toBe(tags[0]);
    expect(fallback.builds).toBe(1);
    expect(provider.current().image).toBe(tags[0]);
    expect(provider.nodeBaseImage()).toBe(tags[0]);
    // Another process finds it on the engine and builds nothing.
    const next = stubFallback(tags[0]!);
    expect(await new ImageProvider(docker, undefined, log, UNPULLABLE, next).ensure()).toBe(tags[0]);
    expect(next.builds).toBe(0);
  });

  it('answers that the build goes on when it outlasts the wait, and uses the image once built', async () => {
    let open!: () => void;
    const fallback = stubFallback(tags[1]!, new Promise<void>((resolve) => (open = resolve)));
    const provider = new ImageProvider(docker, undefined, log, UNPULLABLE, fallback, 200);
    const refused = await provider.ensure().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ManagementError);
    expect((refused as ManagementError).kind).toBe('unavailable');
    expect((refused as Error).message).toMatch(new RegExp(`^The development environment image "${UNPULLABLE}" is not on the Docker engine and could not be pulled \\(.+\\); Backyard's offline image ${tags[1]} is being built in its place: the build started \\d+ s ago .*Call createDevelopmentEnvironment again in a minute\\.$`));
    // A second caller meanwhile joins the same build.
    const second = provider.ensure();
    open();
    expect(await second).toBe(tags[1]);
    expect(fallback.builds).toBe(1);
  });

  it('says exactly what to install when debootstrap is missing', async () => {
    const missing: FallbackImage = { image: tags[2]!, build: () => buildDebianImage(docker, { image: tags[2], debootstrap: '/nonexistent/debootstrap' }) };
    const provider = new ImageProvider(docker, undefined, log, UNPULLABLE, missing);
    const refused = (await provider.ensure().catch((error: unknown) => error)) as ManagementError;
    expect(refused.kind).toBe('unavailable');
    expect(refused.message).toContain(`"${UNPULLABLE}" is not on the Docker engine and could not be pulled`);
    expect(refused.message).toContain(`Backyard's offline image ${tags[2]}, which it uses in its place, could not be built: debootstrap is not installed on the Backyard machine. Install it as root with \`apt-get install -y debootstrap\``);
    expect(await docker.getImage(tags[2]!).inspect().catch(() => 'absent')).toBe('absent');
  });

  it('reads what an image holds from its labels, else by looking inside', async () => {
    const provider = new ImageProvider(docker, undefined, log, OFFLINE_IMAGE);
    expect(await provider.factsOf(OFFLINE_IMAGE)).toEqual({ image: OFFLINE_IMAGE, operatingSystem: BUSYBOX_OS });
    expect(await probeFacts(docker, undefined, OFFLINE_IMAGE)).toEqual({ image: OFFLINE_IMAGE, operatingSystem: BUSYBOX_OS });
  });

  it.skipIf(SKIP_DOCKER)('finds apt-get and Debian inside Backyard\'s Debian image by looking, as by its labels', async () => {
    await requireDocker(DEBIAN_IMAGE);
    const facts = { image: DEBIAN_IMAGE, operatingSystem: expect.stringMatching(/^Debian GNU\/Linux \d+/), packageManager: 'apt-get', installCommand: 'apt-get update && apt-get install -y <package>' };
    expect(await probeFacts(docker, undefined, DEBIAN_IMAGE)).toEqual(facts);
    expect(await new ImageProvider(docker, undefined, log, DEBIAN_IMAGE).factsOf(DEBIAN_IMAGE)).toEqual(facts);
  });
});

describe('image facts, apt sources and guide placeholders', () => {
  it('reads a probe: the first package manager found and the system name', () => {
    expect(parseProbe('x', 'os=Alpine Linux v3.20\npm=apk\n')).toEqual({ image: 'x', operatingSystem: 'Alpine Linux v3.20', packageManager: 'apk', installCommand: 'apk add <package>' });
    expect(parseProbe('x', 'os=\n')).toEqual({ image: 'x' });
    expect(parseProbe('x', 'os=Fedora\npm=dnf\npm=yum\n').packageManager).toBe('dnf');
  });

  it('guesses from the name before an image could be looked at', () => {
    expect(guessFacts('alpine:3.20').installCommand).toBe('apk add <package>');
    expect(guessFacts('node:20-alpine').installCommand).toBe('apk add <package>');
    expect(guessFacts('debian:bookworm').installCommand).toBe('apt-get update && apt-get install -y <package>');
    expect(guessFacts('example.org/team/tools:1')).toEqual({ image: 'example.org/team/tools:1' });
  });

  it('writes an install command, or one that says there is no package manager and fails', () => {
    expect(installPackagesCommand({ image: 'a', installCommand: 'apk add <package>' }, 'git jq')).toBe('apk add git jq');
    expect(installPackagesCommand({ image: OFFLINE_IMAGE }, 'git')).toBe(`echo 'the image ${OFFLINE_IMAGE} has no package manager: git cannot be installed' >&2; false`);
  });

  it('takes the mirror from apt\'s sources: deb822 and one-line files, skipping updates, security and deb-src', () => {
    const deb822 = [
      'Types: deb',
      '# http://snapshot.debian.org/archive/debian/20250520T000000Z',
      'URIs: http://deb.debian.org/debian',
      'Suites: bookworm bookworm-updates',
      'Components: main',
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
      '',
      'Types: deb',
      'URIs: http://deb.debian.org/debian-security',
      'Suites: bookworm-security',
      'Components: main',
    ].join('\n');
    expect(mirrorFromSources([{ name: 'debian.sources', content: deb822 }])).toEqual({
      uri: 'http://deb.debian.org/debian',
      suite: 'bookworm',
      keyring: '/usr/share/keyrings/debian-archive-keyring.gpg',
    });
    const oneLine = '# comment\ndeb-src http://src.example/debian bookworm main\ndeb http://security.debian.org/ bookworm-security main\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/ubuntu/ jammy main universe\n';
    expect(mirrorFromSources([{ name: 'sources.list', content: oneLine }])).toEqual({ uri: 'http://mirror.example/ubuntu', suite: 'jammy', keyring: '/k.gpg' });
    expect(mirrorFromSources([{ name: 'other.sources', content: 'Enabled: no\nTypes: deb\nURIs: http://x/debian\nSuites: bookworm\n' }])).toBeUndefined();
    expect(mirrorFromSources([])).toBeUndefined();
  });

  it('fills the image placeholders of guides from the service, and leaves them until it is known', () => {
    const urls = new PublicUrls('http://localhost:4000');
    const text = 'run `{devenv_image}`; install with `{devenv_install_command}`: {devenv_install:git curl}; FROM {node_base_image}; {hosting:site}';
    expect(fillAddresses(text, urls)).toBe('run `{devenv_image}`; install with `{devenv_install_command}`: {devenv_install:git curl}; FROM {node_base_image}; http://site.localhost:4000/');
    urls.describeEnvironmentsWith(() => ({ image: 'alpine:3.20', installCommand: 'apk add <package>', nodeBaseImage: 'node:20-alpine' }));
    expect(fillAddresses(text, urls)).toBe('run `alpine:3.20`; install with `apk add <package>`: apk add git curl; FROM node:20-alpine; http://site.localhost:4000/');
    urls.describeEnvironmentsWith(() => ({ image: OFFLINE_IMAGE, nodeBaseImage: DEBIAN_IMAGE }));
    expect(fillAddresses('{devenv_install_command} / {devenv_install:git}', urls)).toBe(
      `none (${OFFLINE_IMAGE} has no package manager) / echo 'the image ${OFFLINE_IMAGE} has no package manager: git cannot be installed' >&2; false`,
    );
  });
});

import { installPackagesCommand } from './devenvs/imageFacts.js';
import type { EnvironmentImageText } from './devenvs/service.js';

/**
 * The public addresses of one Backyard (docs/design.md, "One process, one port"). The base is known only
 * once the HTTP listener is bound (port 0 picks a free port), so it is set after listening.
 */
export class PublicUrls {
  private current: string | undefined;
  private listenPort: number | undefined;
  private environmentImage: (() => EnvironmentImageText) | undefined;

  constructor(
    fixed?: string,
    /** Wildcard domain of hosted sites (`BACKYARD_HOSTING_DOMAIN`); default: the base URL's host. */
    private readonly hostingDomain?: string,
  ) {
    this.current = fixed?.replace(/\/+$/, '');
  }

  /** The domain under which hosted sites live, e.g. `localhost` for `<sub>.localhost`. */
  get hostingParent(): string {
    return this.hostingDomain ?? new URL(this.base).hostname;
  }

  /** Sets the base, e.g. `http://localhost:4000`, unless `BACKYARD_PUBLIC_URL` fixed it. */
  bindDefault(base: string): void {
    this.current ??= base.replace(/\/+$/, '');
  }

  /** The port the HTTP listener is bound to, which containers reach at `backyard.internal`. */
  bindListenPort(port: number): void {
    this.listenPort = port;
  }

  /** Backyard's address from inside development environments: `http://backyard.internal:<port>`. */
  get inEnvironments(): string {
    const base = new URL(this.base);
    const port = this.listenPort ?? (Number(base.port) || (base.protocol === 'https:' ? 443 : 80));
    return `http://backyard.internal:${port}`;
  }

  /**
   * Where `fillAddresses` reads what guides say of development environments' image
   * (`{devenv_image}`, `{devenv_install_command}`, `{devenv_install:<packages>}`, `{node_base_image}`):
   * platform.ts points it at the development environment service.
   */
  describeEnvironmentsWith(source: () => EnvironmentImageText): void {
    this.environmentImage = source;
  }

  /** What guides say of development environments' image, once a source is set. */
  get environments(): EnvironmentImageText | undefined {
    return this.environmentImage?.();
  }

  /** `http(s)://host[:port]` without a trailing slash. @throws Error before the listener is bound. */
  get base(): string {
    if (!this.current) throw new Error('The public URL is not known yet: the HTTP listener has not started.');
    return this.current;
  }

  /** `{base_url}` of Interface A. */
  get managementApi(): string {
    return `${this.base}/v1`;
  }

  /** `{data_api_url}` of Interface B: one mount for every Backend App, chosen by its application id. */
  get dataApi(): string {
    return `${this.base}/data`;
  }

  /**
   * Parse's GraphQL API of every Backend App, chosen by its application id header as on the data API
   * (docs/design.md, "Parse clients we serve, not rebuild"): `/graphql` on the data API's host. The one
   * place that says where it is (Parse Dashboard's `graphQLServerURL` reads it).
   */
  get graphql(): string {
    return `${this.base}/graphql`;
  }

  /** `{sdk_script_url}`: the browser build of the Parse JavaScript SDK. */
  get sdkScript(): string {
    return `${this.base}/sdk/parse.min.js`;
  }

  get mcp(): string {
    return `${this.base}/mcp`;
  }

  backendAppDashboard(appId: string): string {
    return `${this.base}/dashboard/apps/${encodeURIComponent(appId)}`;
  }

  /**
   * The address of a hosted site: `<subdomain>.<hosting domain>` on the same port and scheme as
   * the base (`http://<sub>.localhost:4000/`; browsers resolve `*.localhost` to loopback).
   */
  hosting(subdomain: string): string {
    const url = new URL(this.base);
    url.hostname = `${subdomain}.${this.hostingParent}`;
    url.pathname = '/';
    return url.toString();
  }
}

/**
 * Fills the addresses of this Backyard into text written for assistants (guides, tool
 * descriptions): `{backyard_url}`, `{base_url}`, `{data_api_url}`,
 * `{sdk_script_url}`, `{repo_host}` (the built-in git host, e.g. `localhost:4000/git`: the spec's
 * name), `{backyard_url_in_environments}`, `{environment_git_host}` (`backyard.internal:4000/git`) and
 * `{hosting:<subdomain>}`; and what runs development environments (`PublicUrls.environments`): `{devenv_image}`, `{devenv_install_command}` (with `<package>`
 * for the names, or a sentence saying there is no package manager), `{devenv_install:<packages>}` (a
 * command that installs those packages, or says on stderr that it cannot and fails) and
 * `{node_base_image}` (a base image for Node web apps that builds here). Other braces are left as
 * they are; before the listener is bound (no base yet) the text is returned unchanged, and the
 * environment placeholders stay until a source is set.
 */
export function fillAddresses(text: string, urls: PublicUrls): string {
  let base: string;
  try {
    base = urls.base;
  } catch {
    return text;
  }
  const values: Record<string, string> = {
    backyard_url: base,
    base_url: urls.managementApi,
    data_api_url: urls.dataApi,
    sdk_script_url: urls.sdkScript,
    repo_host: `${new URL(base).host}/git`,
    backyard_url_in_environments: urls.inEnvironments,
    environment_git_host: `${new URL(urls.inEnvironments).host}/git`,
  };
  const environments = /\{(devenv_|node_base_image)/.test(text) ? urls.environments : undefined;
  if (environments) {
    values.devenv_image = environments.image;
    values.devenv_install_command = environments.installCommand ?? `none (${environments.image} has no package manager)`;
    values.node_base_image = environments.nodeBaseImage;
  }
  return text.replace(/\{(hosting:([a-z0-9-]+)|devenv_install:([a-z0-9][a-z0-9.+ -]*)|[a-z_]+)\}/g, (whole, name: string, sub?: string, packages?: string) => {
    if (sub) return urls.hosting(sub);
    if (packages) return environments ? installPackagesCommand(environments, packages) : whole;
    return values[name] ?? whole;
  });
}

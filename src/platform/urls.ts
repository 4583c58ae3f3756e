/**
 * The public addresses of one Backyard (design.md, "One process, one port"). The base is known only
 * once the HTTP listener is bound (port 0 picks a free port), so it is set after listening.
 */
export class PublicUrls {
  private current: string | undefined;

  constructor(fixed?: string) {
    this.current = fixed?.replace(/\/+$/, '');
  }

  /** Sets the base, e.g. `http://localhost:4000`, unless `BACKYARD_PUBLIC_URL` fixed it. */
  bindDefault(base: string): void {
    this.current ??= base.replace(/\/+$/, '');
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
   * The address of a hosted site: `<subdomain>.<host>` on the same port and scheme as the base
   * (`http://<sub>.localhost:4000/`; browsers resolve `*.localhost` to loopback).
   */
  hosting(subdomain: string): string {
    const url = new URL(this.base);
    url.hostname = `${subdomain}.${url.hostname}`;
    return url.toString();
  }
}

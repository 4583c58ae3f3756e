import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import type { GitHubAppConfig } from '../../config.js';
import { ManagementError, invalid, unavailable } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Sql } from '../../shared/sql.js';
import { nowIso } from '../../shared/sqlite.js';
import { isOwnerLogin } from './names.js';

/**
 * Which GitHub accounts (users or organisations) each Backyard account may mint tokens for: the
 * "linked" accounts of operation 7. Managed with `backyard account link|unlink|links`.
 */
export class GitHubLinks {
  constructor(private readonly db: Sql) {}

  /**
   * Links `githubLogin` to the account; linking twice changes nothing.
   * @throws ManagementError(invalid) for a malformed login.
   */
  async link(accountId: string, githubLogin: string): Promise<void> {
    if (!isOwnerLogin(githubLogin)) throw invalid(`"${githubLogin}" is not a GitHub login: use 1 to 39 letters, digits or single dashes.`);
    await this.db.run('INSERT INTO github_links (account_id, github_login, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', accountId, githubLogin, nowIso());
  }

  /** Removes a link. @returns whether there was one. */
  async unlink(accountId: string, githubLogin: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM github_links WHERE account_id = ? AND lower(github_login) = lower(?)', accountId, githubLogin)).changes > 0;
  }

  /** The GitHub logins linked to the account, sorted. */
  async list(accountId: string): Promise<string[]> {
    const rows = (await this.db.all('SELECT github_login FROM github_links WHERE account_id = ? ORDER BY lower(github_login), github_login', accountId)) as Array<{
      github_login: string;
    }>;
    return rows.map((r) => r.github_login);
  }

  /** The linked spelling of `githubLogin` (matched without regard to case), or undefined when it is not linked. */
  async find(accountId: string, githubLogin: string): Promise<string | undefined> {
    const row = (await this.db.get('SELECT github_login FROM github_links WHERE account_id = ? AND lower(github_login) = lower(?)', accountId, githubLogin)) as
      | { github_login: string }
      | undefined;
    return row?.github_login;
  }
}

/** A token from a GitHub App installation: `POST /app/installations/{id}/access_tokens`. */
export interface InstallationToken {
  token: string;
  /** ISO 8601, as GitHub answered it (normalised to milliseconds). */
  expiresAt: string;
}

const REQUEST_TIMEOUT_MS = 20_000;

interface HttpError {
  status: number;
  message: string;
}
const httpStatus = (error: unknown): number | undefined =>
  typeof error === 'object' && error !== null && typeof (error as HttpError).status === 'number' ? (error as HttpError).status : undefined;

/**
 * The GitHub App that gives repository access tokens (docs/design.md, decision 10), through
 * `@octokit/app`: it signs a JWT with the app's private key (RS256, `iss` = the app id), finds the
 * app's installation on a user or organisation, and creates an installation access token there.
 * `apiUrl` may point at GitHub Enterprise Server (`https://<host>/api/v3`).
 */
export class GitHubAppHost {
  private readonly app: App;

  constructor(
    private readonly settings: GitHubAppConfig,
    private readonly log: Logger,
  ) {
    const octokitLog = {
      debug: (message: string) => log.debug({ github: true }, message),
      info: (message: string) => log.debug({ github: true }, message),
      warn: (message: string) => log.warn({ github: true }, message),
      error: (message: string) => log.error({ github: true }, message),
    };
    this.app = new App({
      appId: settings.appId,
      privateKey: settings.privateKey,
      log: octokitLog,
      Octokit: Octokit.defaults({ baseUrl: settings.apiUrl, userAgent: 'backyard', log: octokitLog }),
    });
  }

  /**
   * The web origin of the GitHub whose API is configured, where clone addresses point:
   * `https://api.github.com` → `https://github.com`; `https://ghe.example.com/api/v3` →
   * `https://ghe.example.com`; any other API URL → its origin.
   */
  get webUrl(): string {
    const api = new URL(this.settings.apiUrl);
    if (api.hostname === 'api.github.com') return 'https://github.com';
    return api.origin;
  }

  /** `https://x-access-token:<token>@github.com/<owner>/<repo>.git`: GitHub's clone address for an installation token. */
  cloneUrl(owner: string, repo: string, token: string): string {
    const url = new URL(`${this.webUrl}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}.git`);
    url.username = 'x-access-token';
    url.password = token;
    return url.toString();
  }

  /**
   * Creates an installation access token on the app's installation on `login` (a user, else an
   * organisation). GitHub decides its lifetime (one hour) and the repositories it reaches (those
   * the installation was granted).
   * @throws ManagementError(invalid) when the app is not installed on `login`;
   *   ManagementError(unavailable) when GitHub refuses the app's credentials or cannot be reached.
   */
  async installationToken(login: string): Promise<InstallationToken> {
    const installationId = await this.installationId(login);
    try {
      const { data } = await this.app.octokit.request('POST /app/installations/{installation_id}/access_tokens', {
        installation_id: installationId,
        request: { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) },
      });
      const expires = Date.parse(data.expires_at);
      if (typeof data.token !== 'string' || data.token === '' || Number.isNaN(expires)) {
        throw new Error('GitHub answered an access token without token or expires_at');
      }
      return { token: data.token, expiresAt: new Date(expires).toISOString() };
    } catch (error) {
      throw this.failure(error, login, 'create an installation access token');
    }
  }

  /** The id of the app's installation on `login`: `GET /users/{username}/installation`, then `/orgs/{org}/installation`. */
  private async installationId(login: string): Promise<number> {
    const attempts = [
      () => this.app.octokit.request('GET /users/{username}/installation', { username: login, request: { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) } }),
      () => this.app.octokit.request('GET /orgs/{org}/installation', { org: login, request: { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) } }),
    ];
    for (const attempt of attempts) {
      try {
        const { data } = await attempt();
        if (data.suspended_at) {
          throw invalid(`The Backyard GitHub App's installation on "${login}" is suspended. Unsuspend it in the GitHub settings of "${login}", then call again.`);
        }
        return data.id;
      } catch (error) {
        if (httpStatus(error) === 404) continue;
        throw this.failure(error, login, 'find the app installation');
      }
    }
    throw invalid(
      `The Backyard GitHub App is not installed on the GitHub account "${login}". Install the app on that account (its page on GitHub, "Install"), then call again.`,
    );
  }

  private failure(error: unknown, login: string, step: string): Error {
    if (error instanceof ManagementError) return error;
    const status = httpStatus(error);
    this.log.warn({ status, login, step, message: error instanceof Error ? error.message : String(error) }, 'GitHub request failed');
    if (status === 401) {
      return unavailable('GitHub refused the Backyard GitHub App\'s credentials. The administrator should check BACKYARD_GITHUB_APP_ID and the private key.');
    }
    if (status === 403 || status === 422) {
      return invalid(`GitHub refused to ${step} for "${login}" (status ${status}): the app's installation there may lack repository permissions.`);
    }
    if (status !== undefined) return unavailable(`GitHub answered status ${status} when Backyard tried to ${step}. Try again later.`);
    return unavailable(`GitHub could not be reached to ${step}. Try again later; the server log has the details.`);
  }
}

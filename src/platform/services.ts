import type { AccountService } from './accounts/service.js';
import type { BackendAppService } from './backendapps/service.js';
import type { CloudCodeService } from './backendapps/cloudCode/service.js';
import type { GuideService } from './guides/service.js';
import type { PublicUrls } from './urls.js';
import type { DataApiService } from '../data/service.js';
import type { CloudRuntime } from '../data/cloud/types.js';
import type { DevEnvService } from './devenvs/service.js';
import type { RepoHostService } from './repohost/service.js';
import type { WebAppService } from './webapps/service.js';

/**
 * The domain services the operation handlers call (style.md, example 10: services are interfaces,
 * handlers are thin). Later issues add development environments, repository hosts and web apps.
 */
export interface Services {
  urls: PublicUrls;
  accounts: AccountService;
  guides: GuideService;
  backendApps: BackendAppService;
  /** The data API of every Backend App (Interface B) and `callBackendAPI`. */
  dataApi: DataApiService;
  /** Each Backend App's cloud code worker (issue 4). */
  cloud: CloudRuntime;
  /** Each Backend App's cloud code files: deployCloudCode and getCloudCode (issue 4). */
  cloudCode: CloudCodeService;
  /** Development environments and command executions on Docker (issue 5). */
  devenvs: DevEnvService;
  /** The built-in git host, repository access tokens and the GitHub App (issue 6). */
  repoHost: RepoHostService;
  /** Web Apps: deployments on Docker and the reverse proxy behind their appURL (issue 6). */
  webApps: WebAppService;
}

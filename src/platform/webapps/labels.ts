import { createHash } from 'node:crypto';
import { LABEL_ACCOUNT, LABEL_HOME, LABEL_KIND, LABEL_MANAGED } from '../devenvs/labels.js';

/**
 * Docker labels of Web App containers, as constants (style.md, example 12). A deployment's
 * container is found by these labels, never by a stored container id, so the active container of a
 * Web App is found again after a restart of Backyard. The shared labels (managed,
 * kind, home, account) are those of development environments.
 */
export { LABEL_ACCOUNT, LABEL_HOME, LABEL_KIND, LABEL_MANAGED };

/** `LABEL_KIND` of everything made for a Web App. */
export const KIND_WEBAPP = 'web-app';
/** The Web App's id (Interface A `WebApp.appId`). */
export const LABEL_WEBAPP = 'dev.backyard.webapp.id';
/** The deployment's id (Interface A `Deployment.id`). */
export const LABEL_DEPLOYMENT = 'dev.backyard.deployment.id';

/** The labels of a deployment's container. */
export const deploymentLabels = (home: string, accountId: string, webAppId: string, deploymentId: string): Record<string, string> => ({
  [LABEL_MANAGED]: 'true',
  [LABEL_KIND]: KIND_WEBAPP,
  [LABEL_HOME]: home,
  [LABEL_ACCOUNT]: accountId,
  [LABEL_WEBAPP]: webAppId,
  [LABEL_DEPLOYMENT]: deploymentId,
});

/** A Docker `filters` value matching one deployment's container. */
export const deploymentFilter = (deploymentId: string) => ({ label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_DEPLOYMENT}=${deploymentId}`] });

/** A Docker `filters` value matching every Web App object of one home (tests and operators clean up with it). */
export const webAppHomeFilter = (home: string) => ({ label: [`${LABEL_KIND}=${KIND_WEBAPP}`, `${LABEL_HOME}=${home}`] });

/**
 * The image repository of one Web App of one home: `backyard-webapp-<8 hex digits of the home's hash>/<subdomain>`.
 * Images carry no labels (the engine's builder would add one uncached build step per label, about
 * 70 ms each), so the home's images are found by this name instead: `imageFilter(home)`.
 */
export const imageRepository = (home: string, subdomain: string) => `backyard-webapp-${createHash('sha256').update(home).digest('hex').slice(0, 8)}/${subdomain}`;

/** A deployment's image reference (lowercase, as the engine wants): `<imageRepository>:<deployment id in lowercase>`. */
export const imageTag = (home: string, subdomain: string, deploymentId: string) => `${imageRepository(home, subdomain)}:${deploymentId.toLowerCase()}`;

/** A Docker `filters` value matching every Web App image of one home. */
export const imageFilter = (home: string) => ({ reference: [`${imageRepository(home, '*')}`] });

/** Names are for people reading `docker ps`; lookups go by labels. */
export const containerName = (subdomain: string, deploymentId: string) => `backyard-webapp-${subdomain}-${deploymentId}`;

/**
 * The deployment id on the containers of a swarm service's tasks (swarm.ts). Not `LABEL_DEPLOYMENT`:
 * the engine, not Backyard, starts, stops and replaces those containers, so the code that looks up a
 * deployment's own container by `LABEL_DEPLOYMENT` (runner.ts, addresses.ts) must not find them.
 */
export const LABEL_TASK_DEPLOYMENT = 'dev.backyard.service.deployment.id';
/** `LABEL_KIND` of the networks made for Web App services (swarm.ts): an account's overlay and the home's reach network. */
export const KIND_SERVICE_NETWORK = 'web-app-service-network';

const homeHash = (home: string) => createHash('sha256').update(home).digest('hex').slice(0, 8);

/** The labels of a Web App's swarm service (the deployment it runs is in its task's labels). */
export const serviceLabels = (home: string, accountId: string, webAppId: string): Record<string, string> => ({
  [LABEL_MANAGED]: 'true',
  [LABEL_KIND]: KIND_WEBAPP,
  [LABEL_HOME]: home,
  [LABEL_ACCOUNT]: accountId,
  [LABEL_WEBAPP]: webAppId,
});

/** The labels of the containers of a Web App service's tasks for one deployment. */
export const taskLabels = (home: string, accountId: string, webAppId: string, deploymentId: string): Record<string, string> => ({
  ...serviceLabels(home, accountId, webAppId),
  [LABEL_TASK_DEPLOYMENT]: deploymentId,
});

/** The labels of a network made for Web App services; `accountId` is empty for the home's reach network. */
export const serviceNetworkLabels = (home: string, accountId: string): Record<string, string> => ({
  [LABEL_MANAGED]: 'true',
  [LABEL_KIND]: KIND_SERVICE_NETWORK,
  [LABEL_HOME]: home,
  ...(accountId ? { [LABEL_ACCOUNT]: accountId } : {}),
});

/** A Docker `filters` value matching every network made for the Web App services of one home. */
export const serviceNetworkHomeFilter = (home: string) => ({ label: [`${LABEL_KIND}=${KIND_SERVICE_NETWORK}`, `${LABEL_HOME}=${home}`] });

/**
 * The swarm service of one Web App of one home: `backyard-webapp-<16 hex digits of a hash of home and app id>`,
 * short enough for the engine's 63-character limit on service names whatever the subdomain; lookups go by labels.
 */
export const serviceName = (home: string, webAppId: string) => `backyard-webapp-${createHash('sha256').update(`${home}\n${webAppId}`).digest('hex').slice(0, 16)}`;

/** The attachable overlay network of one account's Web App services: `backyard-svc-<12 hex digits of a hash of home and account>`. */
export const accountOverlayName = (home: string, accountId: string) => `backyard-svc-${createHash('sha256').update(`${home}\n${accountId}`).digest('hex').slice(0, 12)}`;

/** The home's reach network, on which Backyard's proxy connects to the services' tasks: `backyard-reach-<8 hex digits of the home's hash>`. */
export const reachNetworkName = (home: string) => `backyard-reach-${homeHash(home)}`;

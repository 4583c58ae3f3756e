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

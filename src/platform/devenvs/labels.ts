import { createHash } from 'node:crypto';

/**
 * Docker labels of development environments, as constants (style.md, example 12, after
 * testcontainers-node's `utils/labels.ts`). Containers and volumes are found by these labels, never
 * by stored container ids (devcontainers/cli does the same), so an environment is found again after
 * a restart of Backyard or of the engine.
 */

/** `true` on everything Backyard creates for a development environment. */
export const LABEL_MANAGED = 'dev.backyard.managed';
/** What the object is: always `development-environment` here. */
export const LABEL_KIND = 'dev.backyard.kind';
export const KIND_DEVENV = 'development-environment';
/** The id of the account that owns the environment. */
export const LABEL_ACCOUNT = 'dev.backyard.account';
/** The environment's id (Interface A `DevelopmentEnvironment.id`). */
export const LABEL_ENVIRONMENT = 'dev.backyard.devenv.id';
/** The absolute `BACKYARD_HOME` of the Backyard that created it: lets tests and operators clean up one home. */
export const LABEL_HOME = 'dev.backyard.home';

/** The labels of an environment's container and volume. */
export const environmentLabels = (home: string, accountId: string, environmentId: string): Record<string, string> => ({
  [LABEL_MANAGED]: 'true',
  [LABEL_KIND]: KIND_DEVENV,
  [LABEL_HOME]: home,
  [LABEL_ACCOUNT]: accountId,
  [LABEL_ENVIRONMENT]: environmentId,
});

/** A Docker `filters` value that matches one account's environment by its labels. */
export const environmentFilter = (accountId: string, environmentId: string) => ({
  label: [`${LABEL_KIND}=${KIND_DEVENV}`, `${LABEL_ACCOUNT}=${accountId}`, `${LABEL_ENVIRONMENT}=${environmentId}`],
});

/** `LABEL_KIND` of the network of one account's containers (networks.ts). */
export const KIND_NETWORK = 'account-network';

/** The labels of an account's network: the home and the account it isolates (docs/design.md, "Security stance"). */
export const networkLabels = (home: string, accountId: string): Record<string, string> => ({
  [LABEL_MANAGED]: 'true',
  [LABEL_KIND]: KIND_NETWORK,
  [LABEL_HOME]: home,
  [LABEL_ACCOUNT]: accountId,
});

/** A Docker `filters` value that matches the networks of every account of one home (tests and operators clean up with it). */
export const networkHomeFilter = (home: string) => ({ label: [`${LABEL_KIND}=${KIND_NETWORK}`, `${LABEL_HOME}=${home}`] });

/**
 * The name of the network of one account of one home: `backyard-<12 hex digits of a hash of both>`.
 * Derived, not stored, so every Backyard process on the home (and a container whose network was
 * removed by hand) finds the same one; the labels say whose it is.
 */
export const accountNetworkName = (home: string, accountId: string) =>
  `backyard-${createHash('sha256').update(`${home}\n${accountId}`).digest('hex').slice(0, 12)}`;

/** A Docker `filters` value that matches every development environment object of one home. */
export const homeFilter = (home: string) => ({ label: [`${LABEL_KIND}=${KIND_DEVENV}`, `${LABEL_HOME}=${home}`] });

/** Names are for people reading `docker ps`; lookups go by labels. */
export const containerName = (environmentId: string) => `backyard-devenv-${environmentId}`;
/** The named volume mounted at `/workspace`; its name is derived from the id so a recreated container finds it. */
export const volumeName = (environmentId: string) => `backyard-devenv-${environmentId}-workspace`;

import type { AnyOperation, OperationName } from './operation.js';
import { LIFECYCLE_NAMES, OPERATION_NAMES } from './operation.js';
import { getGuide } from './getGuide.js';
import { createDevelopmentEnvironment } from './createDevelopmentEnvironment.js';
import { getDevelopmentEnvironments } from './getDevelopmentEnvironments.js';
import { executeCommand } from './executeCommand.js';
import { interactWithCommandExecution } from './interactWithCommandExecution.js';
import { inspectCommandExecution } from './inspectCommandExecution.js';
import { createRepohostInstallationAccessToken } from './createRepohostInstallationAccessToken.js';
import { createBackendApp } from './createBackendApp.js';
import { getBackendApps } from './getBackendApps.js';
import { getBackendApp } from './getBackendApp.js';
import { deployCloudCode } from './deployCloudCode.js';
import { getCloudCode } from './getCloudCode.js';
import { callBackendAPI } from './callBackendAPI.js';
import { activateWebHosting } from './activateWebHosting.js';
import { createWebApp } from './createWebApp.js';
import { getWebApps } from './getWebApps.js';
import { getWebApp } from './getWebApp.js';
import { updateWebApp } from './updateWebApp.js';
import { startDeployment } from './startDeployment.js';
import { getDeployment } from './getDeployment.js';
import { deleteBackendApp } from './deleteBackendApp.js';
import { stopWebApp } from './stopWebApp.js';
import { startWebApp } from './startWebApp.js';
import { deleteWebApp } from './deleteWebApp.js';
import { deleteDevelopmentEnvironment } from './deleteDevelopmentEnvironment.js';
import { restartDevelopmentEnvironment } from './restartDevelopmentEnvironment.js';
import { getCloudCodeVersions } from './getCloudCodeVersions.js';
import { rollbackCloudCode } from './rollbackCloudCode.js';

/** Every operation by name: a missing or misnamed one fails `tsc` (style.md, example 2). */
const byName: { [K in OperationName]: AnyOperation & { name: K } } = {
  getGuide,
  createDevelopmentEnvironment,
  getDevelopmentEnvironments,
  executeCommand,
  interactWithCommandExecution,
  inspectCommandExecution,
  createRepohostInstallationAccessToken,
  createBackendApp,
  getBackendApps,
  getBackendApp,
  deployCloudCode,
  getCloudCode,
  callBackendAPI,
  activateWebHosting,
  createWebApp,
  getWebApps,
  getWebApp,
  updateWebApp,
  startDeployment,
  getDeployment,
  deleteBackendApp,
  stopWebApp,
  startWebApp,
  deleteWebApp,
  deleteDevelopmentEnvironment,
  restartDevelopmentEnvironment,
  getCloudCodeVersions,
  rollbackCloudCode,
};

/** The 20 operations of Interface A in the spec's order, built or not. */
export const specOperations: readonly AnyOperation[] = OPERATION_NAMES.map((name) => byName[name]);

/** The lifecycle operations beyond the spec (delete, stop, start, restart; cloud code versions), after the spec's 20. */
export const lifecycleOperations: readonly AnyOperation[] = LIFECYCLE_NAMES.map((name) => byName[name]);

/** Every operation of the table: the spec's 20, then the lifecycle ones. */
export const allOperations: readonly AnyOperation[] = [...specOperations, ...lifecycleOperations];

/**
 * The operations whose domain service exists: the only ones routed, listed as tools and documented
 * (nothing is advertised that does not work).
 */
export const operations: readonly AnyOperation[] = allOperations.filter((op) => op.handler !== null);

export { byName as operationsByName };

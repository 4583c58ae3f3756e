import type { EnvironmentVariable } from './names.js';
import type { DeploymentRow } from './store.js';

/** The shapes Web App operations take and answer (spec, "Resources and their fields"; tools/schemas.ts checks them). */

/** Interface A `Deployment` (spec, "Resources and their fields"; docs/design.md, decision 11). */
export interface Deployment {
  id: string;
  commitSHA: string;
  createdAt: string;
  status: DeploymentRow['status'];
  error: string;
}

/** Interface A `WebApp`: environment variable values are never part of it, only their keys. */
export interface WebApp {
  appId: string;
  appName: string;
  dashboardURL: string;
  appURL: string;
  repositoryOwnerLogin: string;
  repositoryName: string;
  branchName: string;
  rootDirPath: string;
  environmentVariablesKeys: string[];
  port: number;
  healthCheckPath: string;
  autoDeploy: boolean;
  /** How many copies run when the Docker engine is a swarm manager (1 to 10); one container otherwise. */
  replicas: number;
  status: 'deploying' | 'running' | 'failed' | 'stopped';
  error: string;
  lastDeployment?: Deployment;
  activeDeployment?: Deployment;
}

/** The body of createWebApp (spec, "createWebApp body"). */
export interface CreateWebAppInput {
  appName: string;
  repositoryOwnerLogin: string;
  repositoryName: string;
  branchName?: string;
  rootDirPath?: string;
  environmentVariables?: EnvironmentVariable[];
  port?: number;
  healthCheckPath?: string;
  autoDeploy?: boolean;
  replicas?: number;
}

/** The body of updateWebApp (spec, "updateWebApp body"): only what changes. */
export interface UpdateWebAppInput {
  branchName?: string;
  rootDirPath?: string;
  removeEnvironmentVariablesKeys?: string[];
  setEnvironmentVariables?: EnvironmentVariable[];
  port?: number;
  healthCheckPath?: string;
  autoDeploy?: boolean;
  replicas?: number;
}

/** getDeployment's query (spec, operation 20; limits default to 15 rows). */
export interface LogOptions {
  includeBuildLogs?: boolean;
  buildLogsLimit?: number;
  includeContainersLogs?: boolean;
  containersLogsLimit?: number;
}

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { environmentVariable, webApp, webAppSettings } from './schemas.js';

export const createWebApp = defineOperation({
  name: 'createWebApp',
  title: 'Create and deploy a Web App',
  description: [
    'Creates a Web App from a repository with a Dockerfile in rootDirPath and starts its first deployment (build, run, health check). Push the code first (createRepohostInstallationAccessToken).',
    'Environment variable values are stored but never returned. Follow the deployment with getDeployment until active, then give appURL to the person.',
  ].join(' '),
  effect: 'create',
  feature: 'webapps',
  openWorld: true,
  method: 'POST',
  path: '/web-apps',
  input: z.strictObject({
    appName: z.string().min(1).max(63).describe('DNS label: lowercase letters, digits and dashes, 1 to 63'),
    repositoryOwnerLogin: z.string().min(1).describe('Owner (user or organisation) of the repository'),
    repositoryName: z.string().min(1).describe('Repository name, without .git'),
    branchName: webAppSettings.branchName.optional(),
    rootDirPath: webAppSettings.rootDirPath.optional(),
    environmentVariables: z.array(environmentVariable).optional().describe('Variables given to the container'),
    port: webAppSettings.port.optional(),
    healthCheckPath: webAppSettings.healthCheckPath.optional(),
    autoDeploy: webAppSettings.autoDeploy.optional(),
    replicas: webAppSettings.replicas.optional(),
  }),
  output: webApp,
  successStatus: 201,
  errors: [400, 401, 500],
  // A caller that follows progress hears the first deployment through to its end.
  handler: async (input, { account, services, progress, signal }) => {
    const created = await services.webApps.create(account, input);
    if (!progress || !created.lastDeployment) return created;
    await services.webApps.follow(account.id, created.appId, created.lastDeployment.id, progress, signal);
    return services.webApps.get(account.id, created.appId);
  },
});

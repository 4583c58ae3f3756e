import { z } from 'zod';
import { defineOperation } from './operation.js';
import { environmentVariable, idParam, webApp, webAppSettings } from './schemas.js';

export const updateWebApp = defineOperation({
  name: 'updateWebApp',
  title: 'Change a Web App\'s settings',
  description: [
    'Changes only the settings sent; a change to branch, folder, variables, port or health check starts a new deployment.',
  ].join(' '),
  effect: 'replace',
  feature: 'webapps',
  openWorld: true,
  method: 'PUT',
  path: '/web-apps/{appId}',
  input: z.strictObject({
    appId: idParam('A Web App\'s appId'),
    branchName: webAppSettings.branchName.optional(),
    rootDirPath: webAppSettings.rootDirPath.optional(),
    removeEnvironmentVariablesKeys: z.array(z.string().min(1)).optional().describe('Keys of variables to remove'),
    setEnvironmentVariables: z.array(environmentVariable).optional().describe('Variables to add or replace'),
    port: webAppSettings.port.optional(),
    healthCheckPath: webAppSettings.healthCheckPath.optional(),
    autoDeploy: webAppSettings.autoDeploy.optional(),
    replicas: webAppSettings.replicas.optional(),
  }),
  output: webApp,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ appId, ...settings }, { account, services }) => services.webApps.update(account, appId, settings),
});

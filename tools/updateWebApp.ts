import { z } from 'zod';
import { defineOperation } from './operation.js';
import { environmentVariable, idParam, webApp, webAppSettings } from './schemas.js';

export const updateWebApp = defineOperation({
  name: 'updateWebApp',
  title: 'Change a Web App\'s settings',
  description: [
    'Changes only the settings sent. setEnvironmentVariables adds or replaces variables, removeEnvironmentVariablesKeys removes them.',
    'A change that affects the running container (branch, folder, variables, port, health check) starts a new deployment; autoDeploy alone does not.',
  ].join(' '),
  effect: 'replace',
  openWorld: true,
  method: 'PUT',
  path: '/web-apps/{appId}',
  input: z.strictObject({
    appId: idParam('Id of the Web App'),
    branchName: webAppSettings.branchName.optional(),
    rootDirPath: webAppSettings.rootDirPath.optional(),
    removeEnvironmentVariablesKeys: z.array(z.string().min(1)).optional().describe('Keys of variables to remove'),
    setEnvironmentVariables: z.array(environmentVariable).optional().describe('Variables to add or replace'),
    port: webAppSettings.port.optional(),
    healthCheckPath: webAppSettings.healthCheckPath.optional(),
    autoDeploy: webAppSettings.autoDeploy.optional(),
  }),
  output: webApp,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ appId, ...settings }, { account, services }) => services.webApps.update(account, appId, settings),
});

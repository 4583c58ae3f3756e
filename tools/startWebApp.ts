import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam, webApp } from './schemas.js';

export const startWebApp = defineOperation({
  name: 'startWebApp',
  title: 'Start a stopped Web App',
  description: [
    'Runs a stopped Web App again from its active deployment, building nothing (new code: startDeployment). Without an active deployment: 400.',
  ].join(' '),
  effect: 'ensure',
  feature: 'webapps',
  openWorld: false,
  method: 'POST',
  path: '/web-apps/{appId}/start',
  input: z.strictObject({ appId: idParam('A Web App\'s appId') }),
  output: webApp,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.startApp(account.id, appId),
});

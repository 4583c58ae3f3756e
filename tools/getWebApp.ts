import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam, webApp } from './schemas.js';

export const getWebApp = defineOperation({
  name: 'getWebApp',
  title: 'Get a Web App\'s settings and state',
  description: [
    'Answers a Web App: settings, status (deploying, running, failed, stopped), error, appURL, last and active deployments. When it failed, getDeployment with logs tells why.',
  ].join(' '),
  effect: 'read',
  feature: 'webapps',
  openWorld: false,
  method: 'GET',
  path: '/web-apps/{appId}',
  input: z.strictObject({ appId: idParam('A Web App\'s appId') }),
  output: webApp,
  successStatus: 200,
  errors: [401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.get(account.id, appId),
});

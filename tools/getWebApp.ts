import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam, webApp } from './schemas.js';

export const getWebApp = defineOperation({
  name: 'getWebApp',
  title: 'Get a Web App\'s settings and state',
  description:
    'Answers a Web App: its settings, status (deploying, running, failed, stopped), error, appURL and its last and active deployments. When status is failed, call getDeployment with includeBuildLogs and includeContainersLogs to see why.',
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/web-apps/{appId}',
  input: z.strictObject({ appId: idParam('Id of the Web App') }),
  output: webApp,
  successStatus: 200,
  errors: [401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.get(account.id, appId),
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam, webApp } from './schemas.js';

export const stopWebApp = defineOperation({
  name: 'stopWebApp',
  title: 'Stop a Web App',
  description: [
    'Stops the container of a Web App: its appURL stops answering and its status becomes stopped. Its settings, deployments and image are kept.',
    'Use startWebApp to run it again, or startDeployment to deploy it anew (an active new deployment runs it again too). A deploying app cannot be stopped: wait until getWebApp shows running or failed.',
    'Stopping a stopped app changes nothing.',
  ].join(' '),
  effect: 'end',
  openWorld: false,
  method: 'POST',
  path: '/web-apps/{appId}/stop',
  input: z.strictObject({ appId: idParam('Id of the Web App') }),
  output: webApp,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.stop(account.id, appId),
});

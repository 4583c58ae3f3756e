import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam, webApp } from './schemas.js';

export const stopWebApp = defineOperation({
  name: 'stopWebApp',
  title: 'Stop a Web App',
  description: [
    'Stops a Web App\'s container (status stopped, appURL silent), keeping settings, deployments and image; startWebApp or a new deployment runs it again. A deploying app cannot be stopped.',
  ].join(' '),
  effect: 'end',
  feature: 'webapps',
  openWorld: false,
  method: 'POST',
  path: '/web-apps/{appId}/stop',
  input: z.strictObject({ appId: idParam('A Web App\'s appId') }),
  output: webApp,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.stop(account.id, appId),
});

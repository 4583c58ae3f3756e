import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam, webApp } from './schemas.js';

export const startWebApp = defineOperation({
  name: 'startWebApp',
  title: 'Start a stopped Web App',
  description: [
    'Starts the container of a Web App stopped with stopWebApp, from its active deployment: its status goes back to running and its appURL answers again.',
    'It builds nothing: to deploy new code use startDeployment. An app with no active deployment answers 400 (deploy it with startDeployment).',
    'Starting a running app changes nothing.',
  ].join(' '),
  effect: 'ensure',
  openWorld: false,
  method: 'POST',
  path: '/web-apps/{appId}/start',
  input: z.strictObject({ appId: idParam('Id of the Web App') }),
  output: webApp,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.startApp(account.id, appId),
});

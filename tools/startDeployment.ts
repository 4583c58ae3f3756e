import { z } from 'zod';
import { defineOperation } from './operation.js';
import { deployment, idParam } from './schemas.js';

export const startDeployment = defineOperation({
  name: 'startDeployment',
  title: 'Deploy a Web App again',
  description:
    'Starts a new deployment of a Web App from the head of its branch (after a push, or to retry a failed one). Follow it with getDeployment until its status is active or failed.',
  effect: 'create',
  openWorld: true,
  method: 'POST',
  path: '/web-apps/{appId}/deployments',
  input: z.strictObject({ appId: idParam('Id of the Web App') }),
  output: deployment,
  successStatus: 201,
  errors: [400, 401, 404, 500],
  handler: ({ appId }, { account, services }) => services.webApps.deploy(account, appId),
});

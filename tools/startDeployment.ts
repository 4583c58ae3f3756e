import { z } from 'zod';
import { defineOperation } from './operation.js';
import { deployment, idParam } from './schemas.js';

export const startDeployment = defineOperation({
  name: 'startDeployment',
  title: 'Deploy a Web App again',
  description: [
    'Deploys a Web App again from the head of its branch (after a push, or to retry); follow it with getDeployment.',
  ].join(' '),
  effect: 'create',
  feature: 'webapps',
  openWorld: true,
  method: 'POST',
  path: '/web-apps/{appId}/deployments',
  input: z.strictObject({ appId: idParam('A Web App\'s appId') }),
  output: deployment,
  successStatus: 201,
  errors: [400, 401, 404, 500],
  // A caller that follows progress hears the deployment through to its end.
  handler: async ({ appId }, { account, services, progress, signal }) => {
    const started = await services.webApps.deploy(account, appId);
    return progress ? services.webApps.follow(account.id, appId, started.id, progress, signal) : started;
  },
});

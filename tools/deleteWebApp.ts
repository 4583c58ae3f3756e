import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const deleteWebApp = defineOperation({
  name: 'deleteWebApp',
  title: 'Delete a Web App',
  description: [
    'Deletes a Web App for good: containers, images, deployments and logs, settings and variables, subdomain; the repository stays.',
    'Only when the person asked for it (confirm its appName with getWebApps); to pause, use stopWebApp. Again for the same appId: 404.',
  ].join(' '),
  effect: 'end',
  feature: 'webapps',
  openWorld: false,
  method: 'DELETE',
  path: '/web-apps/{appId}',
  input: z.strictObject({ appId: idParam('A Web App\'s appId') }),
  output: z.object({ appId: z.string().describe('The deleted app'), deleted: z.literal(true) }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ appId }, { account, services }) => {
    await services.webApps.remove(account.id, appId);
    return { appId, deleted: true as const };
  },
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const deleteWebApp = defineOperation({
  name: 'deleteWebApp',
  title: 'Delete a Web App',
  description: [
    'Deletes a Web App for good: its containers, the images built for it, its deployments and their logs, its settings and variables, and its subdomain (its appURL stops answering).',
    'A deployment in progress is abandoned. The repository is not touched. Call it only when the person asked to delete this app (confirm its appName with getWebApps first); to pause it instead, use stopWebApp.',
    'Calling it again for the same appId answers 404.',
  ].join(' '),
  effect: 'end',
  openWorld: false,
  method: 'DELETE',
  path: '/web-apps/{appId}',
  input: z.strictObject({ appId: idParam('Id of the Web App to delete') }),
  output: z.object({ appId: z.string().describe('The deleted app'), deleted: z.literal(true) }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ appId }, { account, services }) => {
    await services.webApps.remove(account.id, appId);
    return { appId, deleted: true as const };
  },
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const deleteBackendApp = defineOperation({
  name: 'deleteBackendApp',
  title: 'Delete a Backend App and all its data',
  description: [
    'Deletes a Backend App for good: keys, data (classes, objects, users, files), cloud code, public files and hosting; its clients stop working.',
    'Only when the person asked for it (confirm its appName with getBackendApps). Again for the same appId: 404.',
  ].join(' '),
  effect: 'end',
  feature: 'backend',
  openWorld: false,
  method: 'DELETE',
  path: '/backend-apps/{appId}',
  input: z.strictObject({ appId: idParam('A Backend App\'s appId') }),
  output: z.object({ appId: z.string().describe('The deleted app'), deleted: z.literal(true) }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ appId }, { account, services }) => {
    await services.backendApps.delete(account.id, appId);
    return { appId, deleted: true as const };
  },
});

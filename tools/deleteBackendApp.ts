import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const deleteBackendApp = defineOperation({
  name: 'deleteBackendApp',
  title: 'Delete a Backend App and all its data',
  description: [
    'Deletes a Backend App for good: its record and keys, its data (every class, object, user and file), its cloud code and public files, its hosting subdomain, and its running cloud code.',
    'Nothing can be recovered afterwards, and clients using its keys stop working: call it only when the person asked to delete this app (confirm its appName with getBackendApps first).',
    'Calling it again for the same appId answers 404.',
  ].join(' '),
  effect: 'end',
  openWorld: false,
  method: 'DELETE',
  path: '/backend-apps/{appId}',
  input: z.strictObject({ appId: idParam('Application id of the Backend App to delete') }),
  output: z.object({ appId: z.string().describe('The deleted app'), deleted: z.literal(true) }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ appId }, { account, services }) => {
    await services.backendApps.delete(account.id, appId);
    return { appId, deleted: true as const };
  },
});

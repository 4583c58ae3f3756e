import { z } from 'zod';
import { notFound } from '../src/errors.js';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const activateWebHosting = defineOperation({
  name: 'activateWebHosting',
  title: 'Host a Backend App\'s public folder',
  description: [
    'Serves the Backend App\'s public/ folder on a subdomain of its own and answers its address (the same on every call). Deploy the files with deployCloudCode first, then give publicWebHostingURL to the person.',
  ].join(' '),
  effect: 'ensure',
  feature: 'backend',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/activate-web-hosting',
  input: z.strictObject({ appId: idParam('A Backend App\'s appId') }),
  output: z.object({ publicWebHostingURL: z.string() }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ appId }, { account, services }) => {
    const publicWebHostingURL = await services.backendApps.activateHosting(account.id, appId);
    if (publicWebHostingURL === undefined) {
      throw notFound(`This account has no Backend App with the application id "${appId}". Find the ids with getBackendApps.`);
    }
    return { publicWebHostingURL };
  },
});

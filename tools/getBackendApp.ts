import { z } from 'zod';
import { defineOperation } from './operation.js';
import { backendApp, idParam } from './schemas.js';

export const getBackendApp = defineOperation({
  name: 'getBackendApp',
  title: 'Get a Backend App\'s URLs and keys',
  description: [
    'Answers a Backend App\'s apiURL, dashboardURL, publicWebHostingURL and client keys, as a list of one, or an empty list for an unknown appId. The master key is never returned: the person sees it in the dashboard.',
  ].join(' '),
  effect: 'read',
  feature: 'backend',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps/{appId}',
  input: z.strictObject({ appId: idParam('A Backend App\'s appId') }),
  output: z.object({ backendApps: z.array(backendApp) }),
  restBody: { key: 'backendApps' },
  successStatus: 200,
  errors: [401, 500],
  handler: async ({ appId }, { account, services }) => {
    const app = await services.backendApps.get(account.id, appId);
    return { backendApps: app ? [app] : [] };
  },
});

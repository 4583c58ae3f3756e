import { z } from 'zod';
import { defineOperation } from './operation.js';
import { backendApp, idParam } from './schemas.js';

export const getBackendApp = defineOperation({
  name: 'getBackendApp',
  title: 'Get a Backend App\'s URLs and keys',
  description: [
    'Answers the full form of a Backend App: apiURL, dashboardURL, publicWebHostingURL and the REST, JavaScript, client and .NET keys.',
    'As the spec declares, the answer is a list: one app, or an empty list when the account has no app with that appId (find ids with getBackendApps).',
    'The master key is never returned; the person sees it in the dashboard.',
  ].join(' '),
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps/{appId}',
  input: z.strictObject({ appId: idParam('Application id of the Backend App') }),
  output: z.object({ backendApps: z.array(backendApp) }),
  restBody: { key: 'backendApps' },
  successStatus: 200,
  errors: [401, 500],
  handler: ({ appId }, { account, services }) => {
    const app = services.backendApps.get(account.id, appId);
    return { backendApps: app ? [app] : [] };
  },
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { backendAppSummary } from './schemas.js';

export const getBackendApps = defineOperation({
  name: 'getBackendApps',
  title: 'List Backend Apps',
  description: [
    'Lists the account\'s Backend Apps (appId, appName), or the one named exactly appName; getBackendApp gives its URLs and keys.',
  ].join(' '),
  effect: 'read',
  feature: 'backend',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps',
  query: { 'app-name': 'appName' },
  input: z.strictObject({
    appName: z.string().optional().describe('Only the app with exactly this name'),
  }),
  output: z.object({ backendApps: z.array(backendAppSummary) }),
  restBody: { key: 'backendApps' },
  successStatus: 200,
  errors: [401, 500],
  handler: async ({ appName }, { account, services }) => ({ backendApps: await services.backendApps.list(account.id, appName) }),
});

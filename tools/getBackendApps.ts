import { z } from 'zod';
import { defineOperation } from './operation.js';
import { backendAppSummary } from './schemas.js';

export const getBackendApps = defineOperation({
  name: 'getBackendApps',
  title: 'List Backend Apps',
  description:
    'Lists the Backend Apps of the account (appId and appName), or only the one named exactly appName. Call it to find an app the person mentions by name, then getBackendApp for its URLs and keys.',
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps',
  query: { 'app-name': 'appName' },
  input: z.strictObject({
    appName: z.string().optional().describe('Only the app with exactly this name (REST query parameter app-name)'),
  }),
  output: z.object({ backendApps: z.array(backendAppSummary) }),
  restBody: { key: 'backendApps' },
  successStatus: 200,
  errors: [401, 500],
  handler: ({ appName }, { account, services }) => ({ backendApps: services.backendApps.list(account.id, appName) }),
});

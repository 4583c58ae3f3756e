import { z } from 'zod';
import { defineOperation } from './operation.js';
import { webAppSummary } from './schemas.js';

export const getWebApps = defineOperation({
  name: 'getWebApps',
  title: 'List Web Apps',
  description:
    'Lists the Web Apps of the account (appId and appName), or only the one named exactly appName. Call it to find an app the person mentions by name, then getWebApp for its state.',
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/web-apps',
  query: { 'app-name': 'appName' },
  input: z.strictObject({
    appName: z.string().optional().describe('Only the app with exactly this name (REST query parameter app-name)'),
  }),
  output: z.object({ webApps: z.array(webAppSummary) }),
  restBody: { key: 'webApps' },
  successStatus: 200,
  errors: [401, 500],
  handler: ({ appName }, { account, services }) => ({ webApps: services.webApps.list(account.id, appName) }),
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { webAppSummary } from './schemas.js';

export const getWebApps = defineOperation({
  name: 'getWebApps',
  title: 'List Web Apps',
  description: [
    'Lists the account\'s Web Apps (appId, appName), or the one named exactly appName; getWebApp gives its state.',
  ].join(' '),
  effect: 'read',
  feature: 'webapps',
  openWorld: false,
  method: 'GET',
  path: '/web-apps',
  query: { 'app-name': 'appName' },
  input: z.strictObject({
    appName: z.string().optional().describe('Only the app with exactly this name'),
  }),
  output: z.object({ webApps: z.array(webAppSummary) }),
  restBody: { key: 'webApps' },
  successStatus: 200,
  errors: [401, 500],
  handler: async ({ appName }, { account, services }) => ({ webApps: await services.webApps.list(account.id, appName) }),
});

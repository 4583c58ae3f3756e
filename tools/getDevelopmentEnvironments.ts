import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment } from './schemas.js';

export const getDevelopmentEnvironments = defineOperation({
  name: 'getDevelopmentEnvironments',
  title: 'List development environments',
  description: [
    'Lists the account\'s development environments, or those whose chat title is exactly chatTitle: call it before createDevelopmentEnvironment to reuse one.',
  ].join(' '),
  effect: 'read',
  feature: 'devenv',
  openWorld: false,
  method: 'GET',
  path: '/development-environments',
  query: { 'chat-title': 'chatTitle' },
  input: z.strictObject({
    chatTitle: z.string().optional().describe('Only environments with exactly this chat title'),
  }),
  output: z.object({ developmentEnvironments: z.array(developmentEnvironment) }),
  restBody: { key: 'developmentEnvironments' },
  successStatus: 200,
  errors: [401, 500],
  handler: async ({ chatTitle }, { account, services }) => ({
    developmentEnvironments: await services.devenvs.list(account.id, chatTitle),
  }),
});

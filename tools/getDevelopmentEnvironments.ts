import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment } from './schemas.js';

export const getDevelopmentEnvironments = defineOperation({
  name: 'getDevelopmentEnvironments',
  title: 'List development environments',
  description:
    'Lists the development environments of the account, or only those whose chat title is exactly chatTitle. Call it before createDevelopmentEnvironment to reuse an environment made earlier in the same chat.',
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/development-environments',
  query: { 'chat-title': 'chatTitle' },
  input: z.strictObject({
    chatTitle: z.string().optional().describe('Only environments with exactly this chat title (REST query parameter chat-title)'),
  }),
  output: z.object({ developmentEnvironments: z.array(developmentEnvironment) }),
  restBody: { key: 'developmentEnvironments' },
  successStatus: 200,
  errors: [401, 500],
  handler: ({ chatTitle }, { account, services }) => ({
    developmentEnvironments: services.devenvs.list(account.id, chatTitle),
  }),
});

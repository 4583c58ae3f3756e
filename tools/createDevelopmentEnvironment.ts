import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment } from './schemas.js';

export const createDevelopmentEnvironment = defineOperation({
  name: 'createDevelopmentEnvironment',
  title: 'Create a development environment',
  description: [
    'Creates a Linux container of your own (Alpine Linux with apk, unless the Backyard operator chose another image) in which you can run shell commands (executeCommand) to help the person with IT tasks: install packages, clone a repository, build, test.',
    'Call getDevelopmentEnvironments with the same chatTitle first and reuse the environment when one exists; create one per chat.',
    'Files under /workspace survive restarts and re-creation of the container; the container has memory, CPU and process limits and no access to the host\'s files.',
  ].join(' '),
  effect: 'create',
  openWorld: false,
  method: 'POST',
  path: '/development-environments',
  input: z.strictObject({
    chatTitle: z.string().min(1).max(200).describe('Title of the conversation the environment belongs to (1 to 200 characters)'),
  }),
  output: developmentEnvironment,
  successStatus: 201,
  errors: [400, 401, 500],
  handler: ({ chatTitle }, { account, services }) => services.devenvs.create(account.id, chatTitle),
});

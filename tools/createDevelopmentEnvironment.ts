import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment } from './schemas.js';

export const createDevelopmentEnvironment = defineOperation({
  name: 'createDevelopmentEnvironment',
  title: 'Create a development environment',
  description: [
    'Creates an Alpine Linux container of your own in which you can run shell commands (executeCommand) to help the person with IT tasks: install packages with apk, clone a repository, build, test.',
    'Call getDevelopmentEnvironments with the same chatTitle first and reuse the environment when one exists; create one per chat.',
    'Files under /workspace survive restarts of the container.',
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
  handler: null, // the development environment issue builds its service
});

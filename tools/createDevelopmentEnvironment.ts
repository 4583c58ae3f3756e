import { z } from 'zod';
import { defineOperation } from './operation.js';
import { createdDevelopmentEnvironment } from './schemas.js';

export const createDevelopmentEnvironment = defineOperation({
  name: 'createDevelopmentEnvironment',
  title: 'Create a development environment',
  description: [
    'Creates a Linux container for shell commands (executeCommand).',
    'Call getDevelopmentEnvironments with the same chatTitle first and reuse what exists; one per chat.',
    'The answer gives `image`, `operatingSystem`, `installCommand` (use it to install packages) and backyardURL, Backyard\'s address inside the container ({backyard_url_in_environments}; localhost there is the container): <backyardURL>/git/... is the built-in git host, <backyardURL>/data the data APIs.',
    'Without an image registry the first call may answer 500 while the offline image builds: call again in a minute.',
    '/workspace persists.',
  ].join(' '),
  effect: 'create',
  feature: 'devenv',
  openWorld: false,
  method: 'POST',
  path: '/development-environments',
  input: z.strictObject({
    chatTitle: z.string().min(1).max(200).describe('Title of the conversation the environment belongs to'),
  }),
  output: createdDevelopmentEnvironment,
  successStatus: 201,
  errors: [400, 401, 500],
  handler: ({ chatTitle }, { account, services, progress }) => services.devenvs.create(account.id, chatTitle, progress),
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment } from './schemas.js';

export const createDevelopmentEnvironment = defineOperation({
  name: 'createDevelopmentEnvironment',
  title: 'Create a development environment',
  description: [
    'Creates a Linux container of your own (the operator\'s image: Alpine Linux with apk by default; on machines with no image registry a minimal BusyBox image, where `command -v git apk` tells what is there) in which you can run shell commands (executeCommand) to help the person with IT tasks: install packages, clone a repository, build, test.',
    'The answer\'s backyardURL is Backyard\'s address from inside the container ({backyard_url_in_environments}): use it for the built-in git host (<backyardURL>/git/...) and the data API (<backyardURL>/data), since localhost there is the container itself.',
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

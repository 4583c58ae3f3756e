import { z } from 'zod';
import { defineOperation } from './operation.js';
import { createdDevelopmentEnvironment } from './schemas.js';

export const createDevelopmentEnvironment = defineOperation({
  name: 'createDevelopmentEnvironment',
  title: 'Create a development environment',
  description: [
    'Creates a Linux container of your own in which you can run shell commands (executeCommand) to help the person with IT tasks: install packages, clone a repository, build, test.',
    'The answer says what runs it: `image` (the operator\'s image, Alpine Linux by default, or, on a machine that cannot pull it, Backyard\'s offline Debian image with git, curl, CA certificates and Node.js), `operatingSystem`, and `installCommand`, the command that installs packages there (`apk add <package>` on Alpine, `apt-get update && apt-get install -y <package>` on Debian; absent when the image has no package manager). Use that command, not one you assume.',
    'The first environment on a machine with no image registry can take a few minutes while Backyard builds its offline image: a 500 saying it is being built means call again in a minute.',
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
  output: createdDevelopmentEnvironment,
  successStatus: 201,
  errors: [400, 401, 500],
  handler: ({ chatTitle }, { account, services }) => services.devenvs.create(account.id, chatTitle),
});

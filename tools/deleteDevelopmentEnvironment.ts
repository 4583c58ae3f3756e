import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const deleteDevelopmentEnvironment = defineOperation({
  name: 'deleteDevelopmentEnvironment',
  title: 'Delete a development environment',
  description: [
    'Deletes a development environment for good: commands still running in it end, and its container, its /workspace volume (every file in it) and its command executions are removed.',
    'Push or copy out anything worth keeping first. Call it only when the person asked, or the environment is no longer needed; to end stuck processes instead, use restartDevelopmentEnvironment.',
    'Calling it again for the same id answers 404.',
  ].join(' '),
  effect: 'end',
  openWorld: false,
  method: 'DELETE',
  path: '/development-environments/{developmentEnvironmentId}',
  input: z.strictObject({ developmentEnvironmentId: idParam('Id of the development environment to delete') }),
  output: z.object({ developmentEnvironmentId: z.string().describe('The deleted environment'), deleted: z.literal(true) }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ developmentEnvironmentId }, { account, services }) => {
    await services.devenvs.remove(account.id, developmentEnvironmentId);
    return { developmentEnvironmentId, deleted: true as const };
  },
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const deleteDevelopmentEnvironment = defineOperation({
  name: 'deleteDevelopmentEnvironment',
  title: 'Delete a development environment',
  description: [
    'Deletes a development environment for good: running commands end; its container, /workspace files and executions are removed (push what is worth keeping first).',
    'Only when the person asked, or it is no longer needed; for stuck processes use restartDevelopmentEnvironment. Again: 404.',
  ].join(' '),
  effect: 'end',
  feature: 'devenv',
  openWorld: false,
  method: 'DELETE',
  path: '/development-environments/{developmentEnvironmentId}',
  input: z.strictObject({ developmentEnvironmentId: idParam('Development environment id') }),
  output: z.object({ developmentEnvironmentId: z.string().describe('The deleted environment'), deleted: z.literal(true) }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ developmentEnvironmentId }, { account, services }) => {
    await services.devenvs.remove(account.id, developmentEnvironmentId);
    return { developmentEnvironmentId, deleted: true as const };
  },
});

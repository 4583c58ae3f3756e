import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment, idParam } from './schemas.js';

export const restartDevelopmentEnvironment = defineOperation({
  name: 'restartDevelopmentEnvironment',
  title: 'Restart a development environment',
  description: [
    'Restarts a development environment\'s container: every process ends, /workspace stays.',
    'Use it when commands cannot start (no process slots left) or something hangs that interactWithCommandExecution cannot end; then run commands again.',
  ].join(' '),
  effect: 'mutate',
  feature: 'devenv',
  openWorld: false,
  method: 'POST',
  path: '/development-environments/{developmentEnvironmentId}/restart',
  input: z.strictObject({ developmentEnvironmentId: idParam('Development environment id') }),
  output: developmentEnvironment,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ developmentEnvironmentId }, { account, services }) => services.devenvs.restart(account.id, developmentEnvironmentId),
});

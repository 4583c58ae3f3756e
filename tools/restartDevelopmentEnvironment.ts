import { z } from 'zod';
import { defineOperation } from './operation.js';
import { developmentEnvironment, idParam } from './schemas.js';

export const restartDevelopmentEnvironment = defineOperation({
  name: 'restartDevelopmentEnvironment',
  title: 'Restart a development environment',
  description: [
    'Kills the container of a development environment and starts it again: every process in it ends (commands still running read exited), and /workspace with its files stays.',
    'Use it when commands cannot start because the environment has no process slots left (processes left in the background hold them), or when something in it hangs and interactWithCommandExecution with exit: true cannot end it.',
    'Then run the needed commands again with executeCommand.',
  ].join(' '),
  effect: 'mutate',
  openWorld: false,
  method: 'POST',
  path: '/development-environments/{developmentEnvironmentId}/restart',
  input: z.strictObject({ developmentEnvironmentId: idParam('Id of the development environment') }),
  output: developmentEnvironment,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ developmentEnvironmentId }, { account, services }) => services.devenvs.restart(account.id, developmentEnvironmentId),
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { commandExecution, idParam } from './schemas.js';

export const inspectCommandExecution = defineOperation({
  name: 'inspectCommandExecution',
  title: 'Read a command\'s state and output',
  description: [
    'Answers a command execution\'s status, exitCode once exited, and stdout/stderr so far: follow a command executeCommand answered as running.',
  ].join(' '),
  effect: 'read',
  feature: 'devenv',
  openWorld: false,
  method: 'GET',
  path: '/development-environments/{developmentEnvironmentId}/commands-executions/{commandExecutionId}',
  input: z.strictObject({
    developmentEnvironmentId: idParam('Development environment id'),
    commandExecutionId: idParam('Id of the command execution'),
  }),
  output: commandExecution,
  successStatus: 200,
  errors: [401, 404, 500],
  handler: ({ developmentEnvironmentId, commandExecutionId }, { account, services }) =>
    services.devenvs.inspect(account.id, developmentEnvironmentId, commandExecutionId),
});

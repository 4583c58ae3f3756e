import { z } from 'zod';
import { defineOperation } from './operation.js';
import { commandExecution, idParam } from './schemas.js';

export const interactWithCommandExecution = defineOperation({
  name: 'interactWithCommandExecution',
  title: 'Type into or stop a running command',
  description: [
    'Writes stdin to a running command (a newline is added when missing) and/or ends it with exit: true (SIGTERM, then SIGKILL after 5 s; exit code usually 143).',
    'Answers once it exits or its output settles (5 s at most). Use it to answer a prompt or stop a server. An exited command answers 400: read it with inspectCommandExecution.',
  ].join(' '),
  effect: 'mutate',
  feature: 'devenv',
  openWorld: true,
  method: 'POST',
  path: '/development-environments/{developmentEnvironmentId}/commands-executions/{commandExecutionId}',
  input: z.strictObject({
    developmentEnvironmentId: idParam('Development environment id'),
    commandExecutionId: idParam('Id of the command execution'),
    stdin: z.string().optional().describe('Text to write to the command\'s standard input'),
    exit: z.boolean().optional().describe('true to end the command'),
  }),
  output: commandExecution,
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: ({ developmentEnvironmentId, commandExecutionId, stdin, exit }, { account, services }) =>
    services.devenvs.interact(account.id, developmentEnvironmentId, commandExecutionId, { stdin, exit }),
});

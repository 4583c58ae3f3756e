import { z } from 'zod';
import { defineOperation } from './operation.js';
import { commandExecution, idParam } from './schemas.js';

export const interactWithCommandExecution = defineOperation({
  name: 'interactWithCommandExecution',
  title: 'Type into or stop a running command',
  description: [
    'Sends stdin to a command that is still running (a newline is added when the text does not end with one), and/or ends it with exit: true (SIGTERM to its processes, then SIGKILL after 5 seconds; the exit code is then usually 143).',
    'Answers the execution once it has exited or its output settles: half a second of quiet after its answer, 2 seconds when it writes nothing, 5 seconds at most. Use it to answer a prompt (y/n, a password the person gave you) or to stop a server or a hung command.',
    'A command that has already exited answers 400; use inspectCommandExecution to read its result.',
  ].join(' '),
  effect: 'mutate',
  openWorld: true,
  method: 'POST',
  path: '/development-environments/{developmentEnvironmentId}/commands-executions/{commandExecutionId}',
  input: z.strictObject({
    developmentEnvironmentId: idParam('Id of the development environment'),
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

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { commandExecution, idParam } from './schemas.js';

export const executeCommand = defineOperation({
  name: 'executeCommand',
  title: 'Run a shell command',
  description: [
    'Runs `sh -c <command>` in a development environment (create one with createDevelopmentEnvironment first).',
    'The call answers when the command exits, when it sits reading its input (about a second after its output stops), or after a wait (15 seconds unless the operator changed it), whichever is first: status "exited" with exitCode, or status "running" with the output so far; stdout and stderr keep their last 1 MiB each.',
    'When the command could not start at all (for example the environment has no process slots left), the answer has status "exited", no exitCode, and startError saying why and what to do.',
    'For a running command, call inspectCommandExecution to follow it, or interactWithCommandExecution to type into it or stop it. Several commands may run at once.',
    'Each command starts in /workspace (which persists) in a shell of its own: cd and export do not carry over, so chain steps with &&.',
    'Prefer non-interactive flags (apt-get install -y, git clone --depth 1); install packages with the installCommand that createDevelopmentEnvironment answered.',
  ].join(' '),
  effect: 'mutate',
  openWorld: true,
  method: 'POST',
  path: '/development-environments/{developmentEnvironmentId}/commands-executions',
  input: z.strictObject({
    developmentEnvironmentId: idParam('Id of the development environment'),
    command: z.string().min(1).describe('Shell command line, run with sh -c'),
  }),
  output: commandExecution,
  successStatus: 201,
  errors: [400, 401, 404, 500],
  // No abort signal: the REST front end's fires as soon as a request body has been read, and the wait is short anyway.
  handler: ({ developmentEnvironmentId, command }, { account, services }) =>
    services.devenvs.execute(account.id, developmentEnvironmentId, command),
});

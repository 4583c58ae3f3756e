import { z } from 'zod';
import { defineOperation } from './operation.js';
import { commandExecution, idParam } from './schemas.js';

export const executeCommand = defineOperation({
  name: 'executeCommand',
  title: 'Run a shell command',
  description: [
    'Runs `sh -c <command>` in a development environment, in /workspace, in a shell of its own (cd and export do not carry over: chain with &&).',
    'Answers when the command exits, waits for input (about 1 s of silence) or after about 15 s: status "exited" with exitCode, or "running" with the output so far (the last 1 MiB of stdout and of stderr).',
    'Follow a running one with inspectCommandExecution; answer or stop it with interactWithCommandExecution. startError, with no exitCode, says why a command could not start.',
    'Prefer non-interactive flags.',
  ].join(' '),
  effect: 'mutate',
  feature: 'devenv',
  openWorld: true,
  method: 'POST',
  path: '/development-environments/{developmentEnvironmentId}/commands-executions',
  input: z.strictObject({
    developmentEnvironmentId: idParam('Development environment id'),
    command: z.string().min(1).describe('Shell command line, run with sh -c'),
  }),
  output: commandExecution,
  successStatus: 201,
  errors: [400, 401, 404, 500],
  // The signal ends the wait (MCP cancellation, a REST caller gone); the command runs on.
  handler: ({ developmentEnvironmentId, command }, { account, services, signal, progress }) =>
    services.devenvs.execute(account.id, developmentEnvironmentId, command, signal, progress),
});

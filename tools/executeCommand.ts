import { z } from 'zod';
import { defineOperation } from './operation.js';
import { commandExecution, idParam } from './schemas.js';

export const executeCommand = defineOperation({
  name: 'executeCommand',
  title: 'Run a shell command',
  description: [
    'Runs `sh -c <command>` in a development environment (create one with createDevelopmentEnvironment first).',
    'The call answers when the command exits or after about 15 seconds, whichever is first: status "exited" with exitCode, or status "running" with the output so far.',
    'For a running command, call inspectCommandExecution to follow it, or interactWithCommandExecution to type into it or stop it.',
    'Prefer non-interactive flags (apk add --no-cache, git clone --depth 1). Work under /workspace, which persists.',
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
  handler: null,
});

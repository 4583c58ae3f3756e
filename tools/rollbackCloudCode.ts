import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const rollbackCloudCode = defineOperation({
  name: 'rollbackCloudCode',
  title: 'Roll cloud code back to a version',
  description: [
    'Puts the cloud/ and public/ files of a version from getCloudCodeVersions back in place as a new version,',
    'deployed like deployCloudCode (dependencies installed, code reloaded, same warnings).',
  ].join(' '),
  effect: 'mutate',
  feature: 'backend',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/cloud-code/rollback',
  input: z.strictObject({
    appId: idParam('A Backend App\'s appId'),
    version: z.number().int().min(1).describe('Version to restore'),
  }),
  output: z.object({
    message: z.string().describe('What changed, one line per change, the new version and whether the cloud code was reloaded'),
    warnings: z.array(z.string()).describe('Rules the restored files break and syntax errors; empty when all is well'),
    version: z.number().int().describe('The new version the rollback made'),
  }),
  successStatus: 200,
  errors: [400, 401, 403, 404, 500],
  handler: ({ appId, version }, { account, services, progress }) => services.cloudCode.rollback(account.id, appId, version, progress),
});

import { z } from 'zod';
import { MAX_VERSIONS } from '../src/platform/backendapps/cloudCode/versions.js';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const rollbackCloudCode = defineOperation({
  name: 'rollbackCloudCode',
  title: 'Roll cloud code back to a version',
  description: [
    'Puts the files of an earlier version of a Backend App\'s cloud code tree (cloud/ and public/) back in place, as a new version whose changes say "rollback to version N"; the versions in between stay listed.',
    'Find the version with getCloudCodeVersions. It deploys like deployCloudCode: dependencies in cloud/package.json are installed, the cloud code is reloaded, and the answer says what changed with the same warnings.',
    `Only the newest ${MAX_VERSIONS} versions are kept; an older one answers 404.`,
  ].join(' '),
  effect: 'mutate',
  feature: 'backend',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/cloud-code/rollback',
  input: z.strictObject({
    appId: idParam('A Backend App\'s appId'),
    version: z.number().int().min(1).describe('The version to put back, as getCloudCodeVersions lists it'),
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

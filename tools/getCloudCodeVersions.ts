import { z } from 'zod';
import { MAX_VERSIONS } from '../src/platform/backendapps/cloudCode/versions.js';
import { defineOperation } from './operation.js';
import { cloudCodeVersion, idParam } from './schemas.js';

export const getCloudCodeVersions = defineOperation({
  name: 'getCloudCodeVersions',
  title: 'List cloud code versions',
  description: [
    'Lists a Backend App\'s cloud code versions, newest first: one per deployCloudCode and rollbackCloudCode, the starting files being 1;',
    `the newest ${MAX_VERSIONS} are kept. Each says what changed and if active (in place now). Pick one for rollbackCloudCode.`,
  ].join(' '),
  effect: 'read',
  feature: 'backend',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps/{appId}/cloud-code/versions',
  input: z.strictObject({ appId: idParam('A Backend App\'s appId') }),
  output: z.object({ versions: z.array(cloudCodeVersion).describe('Newest first') }),
  successStatus: 200,
  errors: [400, 401, 404, 500],
  handler: async ({ appId }, { account, services }) => ({ versions: await services.cloudCode.versions(account.id, appId) }),
});

import { z } from 'zod';
import { MAX_VERSIONS } from '../src/platform/backendapps/cloudCode/versions.js';
import { defineOperation } from './operation.js';
import { cloudCodeVersion, idParam } from './schemas.js';

export const getCloudCodeVersions = defineOperation({
  name: 'getCloudCodeVersions',
  title: 'List cloud code versions',
  description: [
    'Lists the kept versions of a Backend App\'s cloud code tree (cloud/ and public/), newest first: each deployCloudCode and rollbackCloudCode makes one, and the starting files are version 1.',
    'Each says what changed and whether it is active (its files are the ones in place).',
    `Only the newest ${MAX_VERSIONS} are kept.`,
    'Use it to find the version to pass to rollbackCloudCode when a deploy broke something.',
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

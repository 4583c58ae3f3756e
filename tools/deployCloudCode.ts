import { z } from 'zod';
import { MAX_CHANGES, MAX_FILE_BYTES, MAX_TREE_BYTES, formatLimit } from '../src/platform/backendapps/cloudCode/limits.js';
import { defineOperation } from './operation.js';
import { cloudCodeChange, idParam } from './schemas.js';

export const deployCloudCode = defineOperation({
  name: 'deployCloudCode',
  title: 'Deploy cloud code and public files',
  description: [
    'Writes or deletes files of a Backend App\'s cloud code tree, all changes or none, then reloads its cloud code.',
    'Roots: cloud/ (server code, entry cloud/main.js) and public/ (files served by web hosting).',
    'Read the files with getCloudCode first so nothing is lost.',
    'Each new cloud/ file must be required from cloud/main.js (append a require line) and must not require the SDK: Parse is a global.',
    'public/ pages load the SDK with <script src="{sdk_script_url}"> and initialise it once loaded.',
    'One function per file: cloud/<tool>/functions/, jobs/, triggers/; public/<tool>/.',
    `Limits: ${formatLimit(MAX_FILE_BYTES)} per file, ${formatLimit(MAX_TREE_BYTES)} in all.`,
    'Fix the warnings it answers (with a syntax error the files are saved, not reloaded) and deploy again.',
  ].join(' '),
  effect: 'mutate',
  feature: 'backend',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/cloud-code',
  input: z.strictObject({
    appId: idParam('A Backend App\'s appId'),
    changes: z.array(cloudCodeChange).min(1).describe(`Changes applied in order, all or none; at most ${MAX_CHANGES}`),
  }),
  output: z.object({
    message: z.string().describe('What changed, one line per change, and whether the cloud code was reloaded'),
    warnings: z.array(z.string()).describe('Rules the deployed files break and syntax errors; empty when all is well'),
  }),
  successStatus: 200,
  errors: [400, 401, 403, 404, 500],
  handler: ({ appId, changes }, { account, services, progress }) => services.cloudCode.deploy(account.id, appId, changes, progress),
});

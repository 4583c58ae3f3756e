import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const getCloudCode = defineOperation({
  name: 'getCloudCode',
  title: 'Read cloud code and public files',
  description: [
    'Reads a file or folder of a Backend App\'s cloud code tree (cloud/ and public/); call it before deployCloudCode.',
    'A file answers its content. A folder (default: both roots) answers, in path order, each file as a line "=== <path> (<size> bytes) ===" then its content; a file that is not UTF-8 shows only "=== <path> (binary, <size> bytes) ===".',
    'Folders show as their path with a trailing /.',
  ].join(' '),
  effect: 'read',
  feature: 'backend',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps/{appId}/cloud-code',
  query: { path: 'path', recursive: 'recursive' },
  input: z.strictObject({
    appId: idParam('A Backend App\'s appId'),
    path: z.string().optional().describe('File or folder, e.g. cloud/main.js or public; default: the root'),
    recursive: z.boolean().optional().describe('For a folder, include sub-folders\' files (default true)'),
  }),
  output: z.object({ content: z.string().describe('The file, or the folder listing') }),
  restBody: { key: 'content', text: true },
  textResult: 'content',
  successStatus: 200,
  errors: [400, 401, 403, 404, 500],
  handler: async ({ appId, path, recursive }, { account, services }) => ({
    content: await services.cloudCode.read(account.id, appId, path, recursive ?? true),
  }),
});

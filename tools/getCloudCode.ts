import { z } from 'zod';
import { defineOperation } from './operation.js';
import { idParam } from './schemas.js';

export const getCloudCode = defineOperation({
  name: 'getCloudCode',
  title: 'Read cloud code and public files',
  description: [
    'Reads a file or a folder of a Backend App\'s cloud code tree (roots cloud/ and public/). Call it before deployCloudCode so that your changes keep the existing code.',
    'A file answers its content as it is. A folder (default: the whole tree, both roots) answers a listing in path order in which each file is a header line "=== <path> (<size> bytes) ===" followed by its content;',
    'a file that is not UTF-8 text shows only its header "=== <path> (binary, <size> bytes) ===" (read alone, it answers "(binary, <size> bytes)").',
    'With recursive true (the default) the listing includes the files of every sub-folder, and empty folders as their path with a trailing /; with recursive false, sub-folders appear only as their path with a trailing /.',
  ].join(' '),
  effect: 'read',
  openWorld: false,
  method: 'GET',
  path: '/backend-apps/{appId}/cloud-code',
  query: { path: 'path', recursive: 'recursive' },
  input: z.strictObject({
    appId: idParam('Application id of the Backend App'),
    path: z.string().optional().describe('File or folder, e.g. cloud/main.js or public; default: the root'),
    recursive: z.boolean().optional().describe('For a folder, include sub-folders\' files (default true)'),
  }),
  output: z.object({ content: z.string().describe('The file, or the folder listing') }),
  restBody: { key: 'content', text: true },
  successStatus: 200,
  errors: [400, 401, 403, 404, 500],
  handler: ({ appId, path, recursive }, { account, services }) => ({
    content: services.cloudCode.read(account.id, appId, path, recursive ?? true),
  }),
});

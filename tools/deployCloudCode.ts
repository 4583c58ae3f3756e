import { z } from 'zod';
import { defineOperation } from './operation.js';
import { cloudCodeChange, idParam } from './schemas.js';

export const deployCloudCode = defineOperation({
  name: 'deployCloudCode',
  title: 'Deploy cloud code and public files',
  description: [
    'Writes or deletes files of a Backend App\'s cloud code tree, all changes or none, then reloads its cloud code.',
    'Two roots: cloud/ (server code; cloud/main.js is the entry) and public/ (static files served by web hosting).',
    'Rules: read the current files with getCloudCode first so nothing is lost; a write carries writeMode (append keeps the file, overwrite replaces it) and data;',
    'each new file under cloud/ must be required from cloud/main.js (append a require line), and must not require the SDK: Parse is a global;',
    'public/ files that use the SDK load it from the sdk script URL and initialise it after it has loaded;',
    'recommended layout, one function per file: cloud/<tool>/functions/, cloud/<tool>/jobs/, cloud/<tool>/triggers/, public/<tool>/.',
    'Answers message (what changed) and warnings (rules broken, syntax errors): fix what the warnings say and deploy again.',
  ].join(' '),
  effect: 'mutate',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/cloud-code',
  input: z.strictObject({
    appId: idParam('Application id of the Backend App'),
    changes: z.array(cloudCodeChange).min(1).describe('Changes applied in order, all or none'),
  }),
  output: z.object({ message: z.string(), warnings: z.array(z.string()) }),
  successStatus: 200,
  errors: [400, 401, 403, 404, 500],
  handler: null,
});

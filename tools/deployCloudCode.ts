import { z } from 'zod';
import { MAX_CHANGES, MAX_FILE_BYTES, MAX_TREE_BYTES, formatLimit } from '../src/platform/backendapps/cloudCode/limits.js';
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
    'public/ files that use the SDK load it with <script src="{sdk_script_url}"> and initialise it after it has loaded;',
    'recommended layout, one function per file: cloud/<tool>/functions/, cloud/<tool>/jobs/, cloud/<tool>/triggers/, public/<tool>/.',
    'A delete removes a file or a folder with its content. Paths are relative and /-separated (no .., no leading /).',
    `Limits: ${MAX_CHANGES} changes per call, ${formatLimit(MAX_FILE_BYTES)} per file and ${formatLimit(MAX_TREE_BYTES)} for the whole tree after the changes.`,
    'Answers message (what changed) and warnings (rules broken, syntax errors; with a syntax error the files are saved but the code is not reloaded): fix what the warnings say and deploy again.',
  ].join(' '),
  effect: 'mutate',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/cloud-code',
  input: z.strictObject({
    appId: idParam('Application id of the Backend App'),
    changes: z.array(cloudCodeChange).min(1).describe(`Changes applied in order, all or none; at most ${MAX_CHANGES}`),
  }),
  output: z.object({
    message: z.string().describe('What changed, one line per change, and whether the cloud code was reloaded'),
    warnings: z.array(z.string()).describe('Rules the deployed files break and syntax errors; empty when all is well'),
  }),
  successStatus: 200,
  errors: [400, 401, 403, 404, 500],
  handler: ({ appId, changes }, { account, services }) => services.cloudCode.deploy(account.id, appId, changes),
});

import { z } from 'zod';
import { defineOperation } from './operation.js';
import { repositoryAccessToken } from './schemas.js';

export const createRepohostInstallationAccessToken = defineOperation({
  name: 'createRepohostInstallationAccessToken',
  title: 'Get a repository access token',
  description: [
    'Creates a short-lived token (one hour) for a repository-host account linked to the caller, good for git clone and push as https://<USER>:<ACCESS_TOKEN>@{repo_host}/<owner>/<repo>.git (with the built-in git host: http://x-access-token:<token>@localhost:4000/git/<owner>/<repo>.git).',
    'accountLogin defaults to the caller\'s own login. Call it before cloning or pushing from a development environment, and again when the token has expired.',
  ].join(' '),
  effect: 'create',
  openWorld: true,
  method: 'POST',
  path: '/repohost-installation-access-token',
  input: z.strictObject({
    accountLogin: z.string().min(1).max(39).optional().describe('Repository-host account (user or organisation) login; default: your own'),
  }),
  output: repositoryAccessToken,
  successStatus: 201,
  errors: [400, 401, 500],
  handler: null,
});

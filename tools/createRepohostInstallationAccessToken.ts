import { z } from 'zod';
import { defineOperation } from './operation.js';
import { repositoryAccessToken } from './schemas.js';

export const createRepohostInstallationAccessToken = defineOperation({
  name: 'createRepohostInstallationAccessToken',
  title: 'Get a repository access token',
  description: [
    'Creates a token for git clone, fetch and push (the password; any user name), valid until expiresAt (about an hour). Never show it to the person.',
    'The host: GitHub when a GitHub App is configured and accountLogin (default: your login) is a GitHub account linked to you; otherwise the built-in git host, where your repositories are under your login (a push creates a missing one).',
    'Clone addresses: from a development environment http://x-access-token:<token>@{environment_git_host}/<owner>/<repo>.git; from the person\'s machine {backyard_url}/git/<owner>/<repo>.git; GitHub https://x-access-token:<token>@github.com/<owner>/<repo>.git.',
  ].join(' '),
  effect: 'create',
  feature: 'webapps',
  openWorld: true,
  method: 'POST',
  path: '/repohost-installation-access-token',
  input: z.strictObject({
    accountLogin: z.string().min(1).max(39).optional().describe('Repository-host account (user or organisation) login; default: your own'),
  }),
  output: repositoryAccessToken,
  successStatus: 201,
  errors: [400, 401, 500],
  handler: async ({ accountLogin }, { account, services }) => {
    const { token, expiresAt } = await services.repoHost.createAccessToken(account, accountLogin);
    return { token, expiresAt };
  },
});

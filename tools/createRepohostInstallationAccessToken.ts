import { z } from 'zod';
import { defineOperation } from './operation.js';
import { repositoryAccessToken } from './schemas.js';

export const createRepohostInstallationAccessToken = defineOperation({
  name: 'createRepohostInstallationAccessToken',
  title: 'Get a repository access token',
  description: [
    'Creates a short-lived token (about one hour; see expiresAt) for a repository-host account linked to the caller, good for git clone, fetch and push as the password of the clone address (below).',
    'accountLogin defaults to the caller\'s own login. Which host answers: GitHub, when Backyard has a GitHub App configured and accountLogin is a GitHub account linked to the caller (the token is then the app\'s installation token there); otherwise the built-in git host, where the only linked account is the caller\'s own login.',
    'Clone addresses: built-in host, from inside a development environment http://x-access-token:<token>@{environment_git_host}/<owner>/<repo>.git (the environment\'s backyardURL followed by /git/), from the person\'s machine {backyard_url}/git/<owner>/<repo>.git (owner = your login; a push to a repository that does not exist yet under your login creates it); GitHub https://x-access-token:<token>@github.com/<owner>/<repo>.git.',
    'Any user name works; the token is the password. A built-in token reaches only its own account\'s repositories.',
    'Call it before cloning or pushing from a development environment, and again when the token has expired. Never show the token to the person. A 400 says which logins are linked, or that the GitHub App is not installed on that account.',
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
  handler: async ({ accountLogin }, { account, services }) => {
    const { token, expiresAt } = await services.repoHost.createAccessToken(account, accountLogin);
    return { token, expiresAt };
  },
});

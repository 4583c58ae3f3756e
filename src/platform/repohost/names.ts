import { LOGIN_PATTERN } from '../../shared/login.js';

/**
 * Repository names on the built-in git host: 1 to 100 letters, digits, `.`, `_` or `-`, as GitHub
 * allows. The folder is `<name>.git`, so a name may not itself end in `.git` (no `x.git.git`), and
 * `.`, `..` or any `..` inside are refused so that a name can never step out of its owner's folder.
 */
export const REPO_NAME_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

/** Why `name` is not a valid repository name, or undefined when it is. */
export function repoNameProblem(name: string): string | undefined {
  if (!REPO_NAME_PATTERN.test(name)) return 'use 1 to 100 letters, digits, dots, dashes or underscores';
  if (name.includes('..')) return 'it may not contain ".."';
  if (name === '.') return 'it may not be "."';
  if (/\.git$/i.test(name)) return 'leave out the ".git" ending (the address adds it)';
  return undefined;
}

/** True when `name` is a valid repository name (see `REPO_NAME_PATTERN`). */
export const isRepoName = (name: string): boolean => repoNameProblem(name) === undefined;

/** True when `login` has the form of an owner (a Backyard or GitHub login). */
export const isOwnerLogin = (login: string): boolean => LOGIN_PATTERN.test(login);

/**
 * Splits `<owner>/<repo>` (an optional `.git` ending is dropped), as `backyard repo create` takes it.
 * @returns undefined when either half is malformed.
 */
export function parseRepoSlug(slug: string): { owner: string; repo: string } | undefined {
  const match = /^([^/]+)\/([^/]+?)(?:\.git)?$/.exec(slug.trim());
  if (!match) return undefined;
  const [, owner, repo] = match as unknown as [string, string, string];
  return isOwnerLogin(owner) && isRepoName(repo) ? { owner, repo } : undefined;
}

/**
 * A branch name that can be put after `refs/heads/` without changing the meaning of a git command
 * line: git's own ref rules (no `..`, no control characters, none of ` ~^:?*[\`, no leading `-` or
 * `/`, no `@{`, not ending in `.lock`, `/` or `.`).
 */
export function isBranchName(name: string): boolean {
  if (name.length === 0 || name.length > 255) return false;
  if (/[\x00-\x20\x7f ~^:?*[\\]/.test(name)) return false;
  if (name.startsWith('-') || name.startsWith('/') || name.endsWith('/') || name.endsWith('.') || name.endsWith('.lock')) return false;
  if (name.includes('..') || name.includes('@{') || name.includes('//') || name === '@') return false;
  return name.split('/').every((part) => part.length > 0 && !part.startsWith('.'));
}

/** All zeros: the object name git uses for "no commit" (a created or deleted ref). */
export const ZERO_SHA = '0000000000000000000000000000000000000000';

import { z } from 'zod';

/**
 * Resource shapes of Interface A (spec, "Resources and their fields"), shared by the operations that
 * return them. Descriptions end up in the MCP tool schemas and in the OpenAPI document.
 */

const timestamp = (what: string) => z.string().describe(`${what}, ISO 8601 in UTC with milliseconds`);

/** An id in the path: required, non-empty. */
export const idParam = (what: string) => z.string().min(1).describe(what);

/** A kept version of a Backend App's cloud code tree (getCloudCodeVersions). */
export const cloudCodeVersion = z.object({
  version: z.number().int().describe('1, 2, 3… per app, in the order the versions were made'),
  createdAt: timestamp('When the version was made'),
  changes: z.string().describe('What made it: the deploy\'s changes ("wrote cloud/main.js (…); deleted public/x.html (…)"), or "rollback to version N"'),
  active: z.boolean().describe('True for the version whose files are in place now'),
});

export const guide = z.object({ content: z.string().describe('The guide as markdown: numbered steps of tool calls') });

export const developmentEnvironment = z.object({
  id: z.string(),
  chatTitle: z.string(),
  createdAt: timestamp('When the environment was created'),
  backyardURL: z
    .string()
    .optional()
    .describe('Backyard\'s address from inside the environment: clone with <backyardURL>/git/<owner>/<repo>.git, call the data API at <backyardURL>/data'),
});

/** createDevelopmentEnvironment's answer: the environment and what runs it. */
export const createdDevelopmentEnvironment = developmentEnvironment.extend({
  image: z
    .string()
    .describe('The image the environment runs: the operator\'s (alpine:3.20 by default), or Backyard\'s offline Debian image when that one cannot be pulled'),
  operatingSystem: z.string().optional().describe('The system inside, from its /etc/os-release, such as "Alpine Linux v3.20" or "Debian GNU/Linux 12 (bookworm)"'),
  installCommand: z
    .string()
    .optional()
    .describe('How to install packages there, <package> standing for their names: "apk add <package>" on Alpine, "apt-get update && apt-get install -y <package>" on Debian; absent when the image has no package manager'),
});

export const commandExecution = z.object({
  id: z.string(),
  stdout: z.string().describe('Standard output so far (its last 1 MiB)'),
  stderr: z.string().describe('Standard error so far (its last 1 MiB)'),
  status: z.enum(['running', 'exited']),
  exitCode: z.number().optional().describe('Present once the command has exited'),
  startError: z
    .string()
    .optional()
    .describe('Present (with status "exited" and no exitCode) when the command could not start at all: why, and how to make room'),
});

export const repositoryAccessToken = z.object({
  token: z.string(),
  expiresAt: timestamp('When the token stops working'),
});

export const backendAppSummary = z.object({
  appId: z.string().describe('The application id, also sent as X-Backend-Application-Id to the data API'),
  appName: z.string(),
});

export const backendApp = backendAppSummary.extend({
  dashboardURL: z.string().describe('Web page where the person can look at and edit the app'),
  apiURL: z.string().describe('Root of the app\'s data API (Parse REST protocol); use it as the SDK\'s serverURL'),
  restKey: z.string().describe('REST API key (X-Backend-REST-API-Key): server-side only, never in a browser'),
  javascriptKey: z.string().describe('JavaScript key for web front ends'),
  clientKey: z.string().describe('Client key for mobile apps'),
  dotnetKey: z.string().describe('.NET key for Windows, Xamarin and Unity apps'),
  publicWebHostingURL: z.string().describe('Address of the hosted public/ folder; empty until activateWebHosting'),
});

export const cloudCodeChange = z.strictObject({
  path: z.string().describe('Relative, /-separated path under cloud/ or public/, e.g. cloud/todo/functions/hello.js'),
  operation: z.enum(['write', 'delete']),
  writeMode: z.enum(['overwrite', 'append']).optional().describe('Required when writing'),
  data: z.string().optional().describe('Content to write (required when writing)'),
});

export const backendApiCall = z.strictObject({
  // Any letter case is taken (assistants write `get`); the data API gets it in capitals.
  method: z
    .preprocess((m) => (typeof m === 'string' ? m.toUpperCase() : m), z.enum(['GET', 'POST', 'PUT', 'DELETE']))
    .describe('HTTP method, any letter case'),
  url: z
    .string()
    .min(1)
    .describe('Path from the data API root, e.g. /classes/ToDo; never /parse/… or /1/…'),
  body: z
    .record(z.string(), z.unknown())
    .default({})
    .describe('JSON body; {} when none'),
});

export const backendApiResult = z.object({
  code: z.number().int().describe('HTTP status of the call'),
  body: z.unknown().describe('JSON answer of the data API'),
});

export const environmentVariable = z.strictObject({
  key: z.string().min(1).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be letters, digits and underscores'),
  value: z.string(),
});

export const deployment = z.object({
  id: z.string(),
  commitSHA: z.string(),
  createdAt: timestamp('When the deployment started'),
  status: z
    .enum(['queued', 'building', 'starting', 'active', 'failed', 'superseded'])
    .describe('queued → building → starting → active, or failed (see error) or superseded'),
  error: z.string().describe('Why it failed; empty otherwise'),
});

export const logRow = z.object({
  source: z.string().describe('Where the line came from, e.g. build, stdout, stderr'),
  message: z.string(),
  time: timestamp('When the line was written'),
});

export const webAppSummary = z.object({ appId: z.string(), appName: z.string() });

export const webApp = webAppSummary.extend({
  dashboardURL: z.string(),
  appURL: z.string().describe('Where the running app answers'),
  repositoryOwnerLogin: z.string(),
  repositoryName: z.string(),
  branchName: z.string(),
  rootDirPath: z.string(),
  environmentVariablesKeys: z.array(z.string()).describe('Only the keys; values are never returned'),
  port: z.number(),
  healthCheckPath: z.string(),
  autoDeploy: z.boolean(),
  replicas: z.number().int(),
  status: z.enum(['deploying', 'running', 'failed', 'stopped']),
  error: z.string(),
  lastDeployment: deployment.optional(),
  activeDeployment: deployment.optional(),
});

/** Web App settings shared by createWebApp and updateWebApp (spec, "createWebApp body"). */
export const webAppSettings = {
  branchName: z.string().min(1).max(255).describe('Branch to deploy; default: the repository\'s default branch'),
  rootDirPath: z.string().max(1024).describe('Folder of the repository that holds the Dockerfile; default: the root'),
  port: z.number().int().min(1).max(65535).describe('Port the container listens on'),
  healthCheckPath: z.string().max(1024).describe('Path that must answer 2xx before the deployment is active, e.g. /healthz'),
  autoDeploy: z.boolean().describe('Deploy again on every push to the branch'),
  replicas: z.number().int().min(1).max(10).describe('Copies on a Docker swarm (default 1)'),
};

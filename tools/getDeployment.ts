import { z } from 'zod';
import { defineOperation } from './operation.js';
import { deployment, idParam, logRow } from './schemas.js';

export const getDeployment = defineOperation({
  name: 'getDeployment',
  title: 'Get a deployment and its logs',
  description: [
    'Answers a deployment\'s state and, on request, its last build log rows (Dockerfile errors) and container log rows (crashes, failed health checks).',
  ].join(' '),
  effect: 'read',
  feature: 'webapps',
  openWorld: false,
  method: 'GET',
  path: '/web-apps/{appId}/deployments/{deploymentId}',
  query: {
    includeBuildLogs: 'includeBuildLogs',
    buildLogsLimit: 'buildLogsLimit',
    includeContainersLogs: 'includeContainersLogs',
    containersLogsLimit: 'containersLogsLimit',
  },
  input: z.strictObject({
    appId: idParam('A Web App\'s appId'),
    deploymentId: idParam('Id of the deployment'),
    includeBuildLogs: z.boolean().optional().describe('Include build log rows (default false)'),
    buildLogsLimit: z.number().int().min(1).max(1000).optional().describe('How many of the last build log rows (default 15)'),
    includeContainersLogs: z.boolean().optional().describe('Include container log rows (default false)'),
    containersLogsLimit: z.number().int().min(1).max(1000).optional().describe('How many of the last container log rows (default 15)'),
  }),
  output: deployment.extend({ buildLogs: z.array(logRow), containersLogs: z.array(logRow) }),
  successStatus: 200,
  errors: [401, 404, 500],
  handler: ({ appId, deploymentId, ...logs }, { account, services }) => services.webApps.deployment(account.id, appId, deploymentId, logs),
});

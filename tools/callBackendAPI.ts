import { z } from 'zod';
import { invalid } from '../src/errors.js';
import { BadCallError } from '../src/data/service.js';
import { defineOperation } from './operation.js';

/** Calls per callBackendAPI. */
const MAX_CALLS = 50;
import { backendApiCall, backendApiResult, idParam } from './schemas.js';

export const callBackendAPI = defineOperation({
  name: 'callBackendAPI',
  title: 'Call a Backend App\'s data API',
  description: [
    'Sends REST calls to a Backend App\'s data API (Parse REST protocol) with its master key; answers each call\'s HTTP code and JSON body, in order.',
    'Start with GET /schemas to learn the classes. body: the object\'s fields for POST and PUT; for GET, query parameters (where as JSON, order, limit, skip, keys, include, count) in url or as fields of body.',
    'GraphQL: POST /graphql with body {query, variables} (Parse\'s GraphQL API, generated from the app\'s classes).',
  ].join(' '),
  effect: 'mutate',
  feature: 'backend',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps/{appId}/call-backend-api',
  input: z.strictObject({
    appId: idParam('A Backend App\'s appId'),
    requests: z.array(backendApiCall).min(1).max(MAX_CALLS).describe(`Calls to make, in order (at most ${MAX_CALLS})`),
  }),
  output: z.object({ responses: z.array(backendApiResult) }),
  successStatus: 200,
  errors: [400, 401, 500],
  handler: async ({ appId, requests }, { account, services }) => {
    if (!(await services.backendApps.get(account.id, appId))) {
      throw invalid(`No Backend App with appId "${appId}" exists in this account. Find the appId with getBackendApps.`);
    }
    try {
      return { responses: await services.dataApi.call(appId, requests) };
    } catch (error) {
      if (error instanceof BadCallError) throw invalid(error.message);
      throw error;
    }
  },
});

import { z } from 'zod';
import { invalid } from '../src/errors.js';
import { APP_NAME_MAX } from '../src/platform/backendapps/service.js';
import { defineOperation } from './operation.js';
import { backendApp } from './schemas.js';

export const createBackendApp = defineOperation({
  name: 'createBackendApp',
  title: 'Create a Backend App',
  description: [
    'Creates a Backend App: a data API speaking the Parse REST protocol (schemaless classes, users, queries) with cloud code and static web hosting.',
    'Call getBackendApps with appName first: names are unique per account, and reusing an app is usually what the person wants.',
    'Give its dashboardURL to the person; model data with callBackendAPI.',
  ].join(' '),
  effect: 'create',
  feature: 'backend',
  openWorld: false,
  method: 'POST',
  path: '/backend-apps',
  input: z.strictObject({
    appName: z.string().min(1).max(APP_NAME_MAX).describe(`Name of the app, 1 to ${APP_NAME_MAX} characters, unique in the account`),
  }),
  output: backendApp,
  successStatus: 201,
  errors: [400, 401, 500],
  handler: ({ appName }, { account, services }) => {
    if (appName.trim() === '') throw invalid('appName must not be blank.');
    return services.backendApps.create(account.id, appName);
  },
});

import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCaseApi, mask, type CaseApi, type DiffCase } from './differential/harness.js';
import { startOracle, type Oracle } from './differential/oracle.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createTestApp } from './helpers/dataApp.js';
import { cases as aggregate } from './differential/cases/aggregate.js';
import { cases as basics } from './differential/cases/basics.js';
import { cases as dashboard } from './differential/cases/dashboard.js';
import { cases as filesSchemasQueries } from './differential/cases/files-schemas-queries.js';
import { cases as objectsSchemas } from './differential/cases/objects-schemas.js';
import { cases as queryKeys } from './differential/cases/query-keys.js';
import { cases as queryWhere } from './differential/cases/query-where.js';
import { cases as requestsUsers } from './differential/cases/requests-users.js';
import { cases as serverOptions } from './differential/cases/server-options.js';
import { cases as sessionsSubsystems } from './differential/cases/sessions-subsystems.js';

// The same requests to Parse Server 9 (on PostgreSQL) and to a Backend App, answers compared after
// masking ids, dates, tokens and error texts. Deliberate differences carry
// `known` and are listed in docs/parse-differences.md.
const groups: Record<string, DiffCase[]> = { basics, 'query-keys': queryKeys, 'query-where': queryWhere, 'objects-schemas': objectsSchemas, 'requests-users': requestsUsers, aggregate, 'server-options': serverOptions, dashboard, 'sessions-subsystems': sessionsSubsystems, 'files-schemas-queries': filesSchemasQueries };

let oracle: Oracle;
let server: TestServer;
let parse: (suffix: string) => CaseApi;
let backyard: (suffix: string) => CaseApi;

beforeAll(async () => {
  [oracle, server] = await Promise.all([startOracle(), startTestServer()]);
  const app = await createTestApp(server, 'differential');
  parse = (suffix) => httpCaseApi('parse', oracle.url, oracle.keys, suffix);
  backyard = (suffix) => httpCaseApi('backyard', app.apiURL, { appId: app.appId, restKey: app.keys.restKey, masterKey: app.keys.masterKey }, suffix);
}, 180_000);
afterAll(async () => {
  await Promise.all([oracle?.close(), server?.close()]);
});

for (const [group, list] of Object.entries(groups).filter(([, l]) => l.length > 0)) {
  describe(group, () => {
    for (const c of list) {
      it(c.name, async () => {
        const suffix = crypto.randomBytes(4).toString('hex');
        const ours = mask(await c.run(backyard(suffix)), c);
        if (c.known) {
          expect(ours, `deliberate difference: ${c.known.reason}`).toEqual(c.known.backyard);
          return;
        }
        const theirs = mask(await c.run(parse(suffix)), c);
        expect(ours).toEqual(theirs);
      });
    }
  });
}

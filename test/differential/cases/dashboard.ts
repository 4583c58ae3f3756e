import type { Answer, CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: the REST endpoints Parse Dashboard 9 calls beside the class routes
 * (`/serverInfo`, `POST /jobs`, `/scriptlog`, `/push_audiences`, `/security`). Where Parse Server's
 * answer holds Parse-only facts (its version, which security checks it has, its log lines), the
 * cases compare the answer's shape: status, keys, types and the rules between fields.
 */

/**
 * For a call that a master-only route refuses: Parse Server answers its 403 and then hands the
 * error on to Express (src/middlewares.js, handleParseErrors), whose final handler destroys the
 * socket, so a keep-alive connection's next request may find it closed. Such calls go on a
 * connection of their own.
 */
const CLOSE = { headers: { connection: 'close' } };

/** The status of each answer: a client key on a master-only route is 403 on both (the body is a known difference, docs/parse-differences.md "Permission errors"). */
const statuses = (answers: Answer[]) => answers.map((a) => a.status);

/** Whether every entry of a `/scriptlog` answer has Parse's keys with their types. */
const logEntriesWellFormed = (body: unknown) =>
  Array.isArray(body) && body.every((e) => e && typeof e.level === 'string' && typeof e.message === 'string' && typeof e.timestamp === 'string' && !Number.isNaN(Date.parse(e.timestamp)));

/** The shape of a security report: keys, types and the rules between the states (Parse Server's src/Security/CheckRunner.js). */
function reportShape(answer: Answer) {
  const report = answer.body?.report;
  const states = ['success', 'fail'];
  const groups: any[] = Array.isArray(report?.groups) ? report.groups : [];
  return {
    status: answer.status,
    keys: Object.keys(answer.body ?? {}),
    reportKeys: Object.keys(report ?? {}).sort(),
    version: report?.version,
    state: states.includes(report?.state),
    stateIsAnyGroupFailed: (report?.state === 'fail') === groups.some((g) => g.state === 'fail'),
    someGroups: groups.length > 0,
    groups: groups.every(
      (g) =>
        JSON.stringify(Object.keys(g).sort()) === '["checks","name","state"]' &&
        typeof g.name === 'string' &&
        states.includes(g.state) &&
        Array.isArray(g.checks) &&
        g.checks.length > 0 &&
        (g.state === 'fail') === g.checks.some((c: any) => c.state === 'fail') &&
        g.checks.every(
          (c: any) =>
            typeof c.title === 'string' &&
            states.includes(c.state) &&
            JSON.stringify(Object.keys(c).sort()) === (c.state === 'fail' ? '["solution","state","title","warning"]' : '["state","title"]') &&
            (c.state !== 'fail' || (typeof c.warning === 'string' && typeof c.solution === 'string')),
        ),
    ),
  };
}

/** An audience of this case and run, so that parallel runs and other cases' audiences do not meet. */
const audience = (api: CaseApi, base: string, query: unknown) => ({ name: api.cls(base), query: JSON.stringify(query) });

export const cases: DiffCase[] = [
  {
    name: 'serverInfo: a semver parseServerVersion and the feature groups and flags the dashboard reads',
    run: async (api) => {
      const info = await api.call('GET', '/serverInfo', { master: true });
      const features = info.body.features ?? {};
      return {
        status: info.status,
        // Backyard adds backyardVersion (its own version) beside Parse's two keys.
        keys: Object.keys(info.body).filter((k) => k !== 'backyardVersion').sort(),
        semver: /^\d+\.\d+\.\d+$/.test(info.body.parseServerVersion),
        features: Object.fromEntries(Object.entries(features).map(([group, flags]) => [group, Object.fromEntries(Object.entries(flags as object).map(([k, v]) => [k, typeof v]))])),
      };
    },
  },
  {
    name: 'POST /jobs: master key only; an unknown jobName is 141',
    run: async (api) => {
      const unknown = await api.call('POST', '/jobs', { master: true, body: { jobName: 'noSuchJob', input: {} } });
      return [statuses([await api.call('POST', '/jobs', { ...CLOSE, body: { jobName: 'noSuchJob' } })]), [unknown.status, unknown.body.code]];
    },
  },
  {
    name: 'POST /jobs without a jobName',
    run: async (api) => api.call('POST', '/jobs', { master: true, body: { input: {} } }),
    known: { reason: 'Parse Server fails looking up an undefined job (500, code 1); Backyard answers the caller\'s mistake with 141 naming jobName', backyard: { status: 400, body: { code: 141, error: '<error>' } } },
  },
  {
    name: 'GET /scriptlog: master key only; an array of {level, message, timestamp} for each level, size and order',
    run: async (api) => {
      const answers = [
        await api.call('GET', '/scriptlog', { master: true }),
        await api.call('GET', '/scriptlog', { master: true, query: { level: 'info', n: '100' } }),
        await api.call('GET', '/scriptlog', { master: true, query: { level: 'error', size: '5' } }),
        await api.call('GET', '/scriptlog', { master: true, query: { order: 'asc', n: '3', from: '2020-01-01T00:00:00Z', until: new Date().toISOString() } }),
      ];
      return [
        statuses([await api.call('GET', '/scriptlog', { ...CLOSE, query: { level: 'info' } })]),
        answers.map((a) => [a.status, logEntriesWellFormed(a.body)]),
        answers[2]!.body.length <= 5,
        answers[3]!.body.length <= 3,
      ];
    },
  },
  {
    name: 'GET /scriptlog with a size that is not a number',
    run: async (api) => api.call('GET', '/scriptlog', { master: true, query: { n: 'many' } }),
    known: { reason: 'Parse Server falls back to 10 lines; Backyard names the parameter', backyard: { status: 400, body: { code: 102, error: '<error>' } } },
  },
  {
    name: 'push_audiences: create, list with where, get, update, delete; query answered parsed',
    run: async (api) => {
      const everyone = audience(api, 'Everyone', { deviceType: { $in: ['ios', 'android'] } });
      const created = await api.call('POST', '/push_audiences', { master: true, body: everyone });
      const id = created.body.objectId;
      const one = () => api.call('GET', `/push_audiences/${id}`, { master: true });
      return [
        created,
        await api.call('GET', '/push_audiences', { master: true, query: { where: { name: everyone.name } } }),
        await one(),
        await api.call('PUT', `/push_audiences/${id}`, { master: true, body: { query: JSON.stringify({ deviceType: 'ios' }) } }),
        await one(),
        await api.call('DELETE', `/push_audiences/${id}`, { master: true }),
        await one(),
        await api.call('GET', '/push_audiences', { master: true, query: { where: { name: everyone.name } } }),
      ];
    },
  },
  {
    name: 'push_audiences: master key only, and query must be a string',
    run: async (api) => {
      const saved = await api.call('POST', '/push_audiences', { master: true, body: audience(api, 'Saved', {}) });
      const id = saved.body.objectId;
      const refused = [
        await api.call('GET', '/push_audiences', CLOSE),
        await api.call('POST', '/push_audiences', { ...CLOSE, body: audience(api, 'Client', {}) }),
        await api.call('GET', `/push_audiences/${id}`, CLOSE),
        await api.call('PUT', `/push_audiences/${id}`, { ...CLOSE, body: { name: 'x' } }),
        await api.call('DELETE', `/push_audiences/${id}`, CLOSE),
      ];
      const objectQuery = await api.call('POST', '/push_audiences', { master: true, body: { name: api.cls('Object'), query: { deviceType: 'ios' } } });
      return [statuses(refused), objectQuery, (await api.call('GET', `/push_audiences/${id}`, { master: true })).status];
    },
  },
  {
    name: 'GET /security: master key only; a report of groups of checks, warnings and solutions on the failed ones',
    run: async (api) => [statuses([await api.call('GET', '/security', CLOSE)]), reportShape(await api.call('GET', '/security', { master: true }))],
  },
];

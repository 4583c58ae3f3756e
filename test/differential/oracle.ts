import { startParseServer, type ParseServerPeer } from '../../bench/parseServer.js';

/**
 * Parse Server 9 on a throwaway PostgreSQL cluster: the oracle of the differential test,
 * started by bench/parseServer.ts. With PARSE_ORACLE=<serverURL>|<appId>|<masterKey>|<restKey> an
 * already running Parse Server is used instead (for quick runs while working; its classes are
 * suffixed per run, so runs do not meet).
 */
export type Oracle = Omit<ParseServerPeer, 'sql'>;

/**
 * Starts the oracle (or uses PARSE_ORACLE, which must then run with the same `config`).
 * @param config more of Parse Server's options (its `cloud` file, `emailAdapter`...), as startParseServer takes them.
 * @throws Error when PostgreSQL is not installed, naming the packages.
 */
export async function startOracle(config?: Record<string, unknown>): Promise<Oracle> {
  const given = process.env.PARSE_ORACLE;
  if (given) {
    const [url, appId, masterKey, restKey] = given.split('|');
    if (!url || !appId || !masterKey || !restKey) throw new Error('PARSE_ORACLE is <serverURL>|<appId>|<masterKey>|<restKey>');
    return { url, keys: { appId, masterKey, restKey, javascriptKey: '' }, close: async () => {} };
  }
  // With its GraphQL API at /graphql (test/graphql-differential.test.ts); REST answers are the same either way.
  return startParseServer({ graphQL: true, config });
}

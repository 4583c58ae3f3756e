import { packageVersion } from '../../../version.js';
import { ParseCode, ParseError } from '../../errors.js';
import { checkProhibitedKeywords } from '../../objects/keywords.js';
import { checkClassName } from '../../schema.js';
import { isPlainObject } from '../../values.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { aggregateRoutes } from './aggregate.js';
import { requireMaster } from './classes.js';
import { fileRoutes } from './files.js';
import { openApiRoutes } from './openapi.js';

/**
 * The Parse Server release whose REST API Backyard's data API follows, reported by `/serverInfo` as
 * `parseServerVersion`. Parse Dashboard reads that field as a semver: it warns about a version it
 * cannot parse and hides the features it gates on one (its `lib/ServerInfo` checks), so the field
 * names the Parse Server whose answers `test/parse-differential.test.ts` compares against (the
 * `parse-server` devDependency), and Backyard's own version goes in `backyardVersion`.
 */
export const PARSE_SERVER_API_VERSION = '9.10.0';

/** Backyard's own version as `/serverInfo` reports it in `backyardVersion` (package.json's). */
export const serverVersion = (): string => packageVersion();

/**
 * Parse Server's feature flags (its `FeaturesRouter`), each true only when a route of this router
 * answers it, so that tools such as Parse Dashboard offer only what works.
 */
function features(router: DataRouter) {
  const has = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string) => router.has(method, path);
  const schemas = has('POST', '/schemas/X');
  return {
    globalConfig: { create: has('PUT', '/config'), read: has('GET', '/config'), update: has('PUT', '/config'), delete: has('PUT', '/config') },
    hooks: { create: has('POST', '/hooks/functions'), read: has('GET', '/hooks/functions'), update: has('PUT', '/hooks/functions/x'), delete: has('PUT', '/hooks/functions/x') },
    cloudCode: { jobs: has('POST', '/jobs/x') },
    logs: { level: has('GET', '/scriptlog'), size: has('GET', '/scriptlog'), order: has('GET', '/scriptlog'), until: has('GET', '/scriptlog'), from: has('GET', '/scriptlog') },
    // Every push leaves a `_PushStatus` object (push/service.ts), which is what the dashboard's push history reads.
    push: { immediatePush: has('POST', '/push'), scheduledPush: false, storedPushData: has('POST', '/push'), pushAudiences: has('GET', '/push_audiences'), localization: false },
    schemas: {
      addField: has('PUT', '/schemas/X'),
      removeField: has('PUT', '/schemas/X'),
      addClass: schemas,
      removeClass: has('DELETE', '/schemas/X'),
      clearAllDataFromClass: has('DELETE', '/purge/X'),
      exportClass: false,
      editClassLevelPermissions: has('PUT', '/schemas/X'),
      editPointerPermissions: has('PUT', '/schemas/X'),
    },
    settings: { securityCheck: has('GET', '/security') },
  };
}

/** Config parameter names: Parse Server stores them as `params.<key>`, so no dots and no leading `$`. */
const CONFIG_KEY = /^[^.$][^.]{0,255}$/;

/**
 * Reads a `PUT /config` body: `{params: {key: value | {"__op": "Delete"}}, masterKeyOnly?: {key: boolean}}`.
 * A deleted key becomes `undefined` (what `StorageAdapter.putConfig` removes). Parameter names and
 * values are scanned for Parse Server's `requestKeywordDenylist` as object writes are, since Parse
 * Server stores the config as an object too (objects/keywords.ts).
 * @throws ParseError 107 for a malformed body, 105 for a bad key or a prohibited keyword.
 */
function readConfigBody(body: unknown): { params: Record<string, unknown>; masterKeyOnly: Record<string, boolean> } {
  if (!isPlainObject(body) || !isPlainObject(body.params)) {
    throw new ParseError(ParseCode.INVALID_JSON, 'PUT /config needs {"params": {"name": value, ...}} and optionally {"masterKeyOnly": {"name": true}}.');
  }
  const rawFlags = body.masterKeyOnly ?? {};
  if (!isPlainObject(rawFlags) || !Object.values(rawFlags).every((v) => typeof v === 'boolean')) {
    throw new ParseError(ParseCode.INVALID_JSON, 'masterKeyOnly must map parameter names to true or false.');
  }
  checkProhibitedKeywords(body.params);
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body.params)) {
    if (!CONFIG_KEY.test(key)) throw new ParseError(ParseCode.INVALID_KEY_NAME, `Invalid config parameter name: ${JSON.stringify(key)} (no dots, no leading $, at most 256 characters).`);
    if (isPlainObject(value) && '__op' in value) {
      if (value.__op !== 'Delete') throw new ParseError(ParseCode.INVALID_JSON, `Config parameter ${key}: only {"__op": "Delete"} is accepted as an operation.`);
      params[key] = undefined;
    } else params[key] = value;
  }
  return { params, masterKeyOnly: rawFlags as Record<string, boolean> };
}

/**
 * `/serverInfo`, `/health`, `/config` and `/purge/<ClassName>` (Parse REST guide, "Config" and
 * Parse Server's routers of the same paths):
 * - `GET /serverInfo`: `{parseServerVersion: PARSE_SERVER_API_VERSION, backyardVersion, features}`. Parse Server wants the
 *   master key; the spec (Interface B, "Server info") shows it with the application id and REST key,
 *   so any key may read it (it holds nothing secret).
 * - `GET /health`: `{status: "ok"}` (without keys it is answered by `public.ts`).
 * - `GET /config`: `{params}` for client keys, without the master-key-only parameters;
 *   `{params, masterKeyOnly}` for the master key.
 * - `PUT /config` (master): sets parameters, `{"__op": "Delete"}` removes one; answers `{result: true}`.
 * - `DELETE /purge/<ClassName>` (master): deletes every object, keeps the schema; 200 `{}`, also
 *   for a class that does not exist (or could not: Parse Server answers so).
 */
export function miscRoutes(router: DataRouter): void {
  router.on('GET', '/serverInfo', () => ok({ parseServerVersion: PARSE_SERVER_API_VERSION, backyardVersion: serverVersion(), features: features(router) }));
  router.on('GET', '/health', () => ok({ status: 'ok' }));
  router.on('GET', '/config', async (req) => {
    const entries = (await req.services.config.get()).filter((e) => req.auth.master || !e.masterKeyOnly);
    const params = Object.fromEntries(entries.map((e) => [e.key, e.value]));
    if (!req.auth.master) return ok({ params });
    return ok({ params, masterKeyOnly: Object.fromEntries(entries.map((e) => [e.key, e.masterKeyOnly])) });
  });
  router.on('PUT', '/config', async (req) => {
    requireMaster(req);
    const { params, masterKeyOnly } = readConfigBody(req.body);
    await req.services.config.put(params, masterKeyOnly);
    return ok({ result: true });
  });
  router.on('DELETE', '/purge/:className', async (req, { className }) => {
    requireMaster(req);
    // Parse Server's PurgeRouter answers {} for a class that does not exist, whatever its name.
    if (req.engine.schema.has(className!)) await req.services.config.purge(className!);
    return ok({});
  });
}

/**
 * Registers every route of this group: files, server info, health, config, purge, aggregate and
 * the per-app OpenAPI document.
 */
export function extraRoutes(router: DataRouter): void {
  fileRoutes(router);
  miscRoutes(router);
  aggregateRoutes(router);
  openApiRoutes(router);
}

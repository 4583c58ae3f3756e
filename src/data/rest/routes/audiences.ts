import type { DataRouter } from '../router.js';
import type { DataRequest, DataResponse } from '../types.js';
import { requireMaster } from './classes.js';

const BASE = '/classes/_Audience';

/** An audience's `query` as Parse Server answers it: the stored JSON text parsed (left as text when it is not JSON). */
function parsedQuery(object: unknown): void {
  if (!object || typeof object !== 'object') return;
  const record = object as Record<string, unknown>;
  if (typeof record.query !== 'string') return;
  try {
    record.query = JSON.parse(record.query);
  } catch {
    // Stored by a client as plain text: answered as it is rather than failing the whole list.
  }
}

/** Runs the class route of `_Audience` for `req` and parses the `query` of what it answers. */
async function asClass(router: DataRouter, req: DataRequest, path: string, parse: 'one' | 'list' | 'none'): Promise<DataResponse> {
  requireMaster(req);
  const answer = await router.dispatch({ ...req, path });
  if (answer.status < 300 && answer.body && typeof answer.body === 'object') {
    if (parse === 'one') parsedQuery(answer.body);
    if (parse === 'list') for (const item of (answer.body as { results?: unknown[] }).results ?? []) parsedQuery(item);
  }
  return answer;
}

/**
 * Push audiences (Parse Server's AudiencesRouter; Parse Dashboard's push page): `_Audience` objects
 * `{name, query, lastUsed, timesUsed}` whose `query` is stored as a JSON string (the where of the
 * installations it targets), master key only. `GET /push_audiences` (a class query, `where` and the
 * other find parameters apply) and `GET /push_audiences/<id>` answer `query` parsed into an object;
 * `POST`, `PUT /<id>` and `DELETE /<id>` answer as the class routes do. 403 `unauthorized` without
 * the master key.
 */
export function audienceRoutes(router: DataRouter): void {
  router.on('GET', '/push_audiences', (req) => asClass(router, req, BASE, 'list'));
  router.on('GET', '/push_audiences/:objectId', (req, { objectId }) => asClass(router, req, `${BASE}/${encodeURIComponent(objectId!)}`, 'one'));
  router.on('POST', '/push_audiences', (req) => asClass(router, req, BASE, 'none'));
  router.on('PUT', '/push_audiences/:objectId', (req, { objectId }) => asClass(router, req, `${BASE}/${encodeURIComponent(objectId!)}`, 'none'));
  router.on('DELETE', '/push_audiences/:objectId', (req, { objectId }) => asClass(router, req, `${BASE}/${encodeURIComponent(objectId!)}`, 'none'));
}

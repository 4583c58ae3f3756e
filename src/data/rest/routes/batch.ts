import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import { errorResponse, type DataRouter } from '../router.js';
import { ok, type DataRequest, type DataResponse } from '../types.js';

/** More sub-requests than this in one batch are refused (the JS SDK sends 20 at a time). */
export const MAX_BATCH = 1000;

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/**
 * A sub-request's path below the mount: `/classes/X`, or with the mount's own path in front
 * (`/data/classes/X`), as the JS SDK sends it.
 */
export function pathBelowMount(path: string, mountPath: string): string {
  if (mountPath && mountPath !== '/' && (path === mountPath || path.startsWith(`${mountPath}/`))) return path.slice(mountPath.length) || '/';
  return path;
}

interface SubRequest {
  method: DataRequest['method'];
  path: string;
  query: Record<string, unknown>;
  body: unknown;
}

function readRequests(body: unknown, mountPath: string): { requests: SubRequest[]; transaction: boolean } {
  if (!isPlainObject(body) || !Array.isArray(body.requests)) throw new ParseError(ParseCode.INVALID_JSON, 'requests must be an array of {method, path, body}.');
  if (body.requests.length > MAX_BATCH) throw new ParseError(ParseCode.COMMAND_UNAVAILABLE, `A batch holds at most ${MAX_BATCH} requests; this one has ${body.requests.length}.`);
  const requests = body.requests.map((r, i) => {
    if (!isPlainObject(r) || typeof r.method !== 'string' || !METHODS.has(r.method.toUpperCase()) || typeof r.path !== 'string' || !r.path.startsWith('/')) {
      throw new ParseError(ParseCode.INVALID_JSON, `requests[${i}] needs a method (GET, POST, PUT, DELETE) and an absolute path.`);
    }
    const url = new URL(r.path, 'http://batch');
    const method = r.method.toUpperCase() as DataRequest['method'];
    const query = Object.fromEntries(url.searchParams);
    const path = pathBelowMount(decodeURI(url.pathname), mountPath);
    if (path === '/batch') throw new ParseError(ParseCode.INVALID_JSON, `requests[${i}]: batches cannot be nested.`);
    return method === 'GET'
      ? { method, path, query: { ...query, ...(isPlainObject(r.body) ? r.body : {}) }, body: undefined }
      : { method, path, query, body: r.body ?? {} };
  });
  return { requests, transaction: body.transaction === true };
}

const asResult = (res: DataResponse) => (res.status < 400 ? { success: res.body } : { error: res.body });

/**
 * `POST /batch` (Parse REST guide, "Batch Operations"): results in order, each `{success}` or
 * `{error: {code, error}}`; with `transaction: true`, all or nothing, and a failure answers the
 * failing request's error body.
 */
export function batchRoutes(router: DataRouter, mountPath: () => string): void {
  router.on('POST', '/batch', async (req) => {
    const { requests, transaction } = readRequests(req.body, mountPath());
    const sub = (r: SubRequest): DataRequest => ({ ...req, ...r });
    if (!transaction) {
      const results = [];
      for (const r of requests) results.push(asResult(await router.dispatch(sub(r))));
      return ok(results);
    }
    try {
      const results = await req.services.atomically(async (services) => {
        const answered = [];
        for (const r of requests) {
          const res = await router.dispatch({ ...sub(r), engine: services.engine, services, inTransaction: true });
          if (res.status >= 400) throw Object.assign(new Error('rollback'), { res });
          answered.push(asResult(res));
        }
        return answered;
      });
      return ok(results);
    } catch (error) {
      const failed = (error as { res?: DataResponse }).res;
      if (failed) return failed;
      if (error instanceof ParseError) return errorResponse(error);
      throw error;
    }
  });
}

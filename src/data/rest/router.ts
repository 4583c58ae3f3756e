import FindMyWay from 'find-my-way';
import type { Logger } from '../../log.js';
import { asParseError, ParseCode, ParseError } from '../errors.js';
import type { DataRequest, DataResponse, RouteHandler } from './types.js';

type Method = DataRequest['method'];

/**
 * Refuses, inside a transactional batch, a route that waits on something outside the data API's
 * storage (cloud code triggers, password hashing) before it changes anything: a trigger calling the
 * data API back would wait for the batch's own transaction.
 * @throws ParseError 108 inside a transactional batch.
 */
export function refuseInTransaction(req: Pick<DataRequest, 'inTransaction' | 'method' | 'path'>): void {
  if (req.inTransaction) throw new ParseError(ParseCode.COMMAND_UNAVAILABLE, `${req.method} ${req.path} cannot run inside a transaction.`);
}

/** The answer for a ParseError: `{code, error}` (or Parse's bare `{error}` for refused keys). */
export function errorResponse(error: ParseError): DataResponse {
  const bare = (error as ParseError & { bare?: boolean }).bare;
  return { status: error.httpStatus, body: bare ? { error: error.message } : { code: error.code, error: error.message } };
}

/**
 * Routes data API calls by method and path, whatever carried them (HTTP, `/batch`,
 * `callBackendAPI`), and turns every failure into Parse's error body: a ParseError as it is,
 * anything else as code 1 with a generic text (details in the log).
 */
export class DataRouter {
  // Stored file names run past find-my-way's default limit of 100 characters per parameter.
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: 500 });

  constructor(private readonly log: Logger) {}

  on(method: Method | Method[], path: string, handler: RouteHandler): this {
    this.router.on(method, path, handler as never);
    return this;
  }

  /** Whether some route answers this method and path. */
  has(method: Method, path: string): boolean {
    return this.router.find(method, path) !== null;
  }

  /**
   * Runs the route for `req`. The answer comes back as it is when the route answers at once (no
   * storage: `/health`, `/serverInfo`), as a promise when it waits. Never throws and never rejects.
   */
  dispatch(req: DataRequest): DataResponse | Promise<DataResponse> {
    const found = this.router.find(req.method, req.path);
    if (!found) {
      return { status: 404, body: { code: ParseCode.INVALID_QUERY, error: `No data API endpoint answers ${req.method} ${req.path}.` } };
    }
    try {
      const result = (found.handler as unknown as RouteHandler)(req, found.params as Record<string, string>);
      return result instanceof Promise ? result.catch((error: unknown) => this.failure(error, req)) : result;
    } catch (error) {
      return this.failure(error, req);
    }
  }

  failure(error: unknown, req: Pick<DataRequest, 'method' | 'path'>): DataResponse {
    const known = asParseError(error);
    if (known) return errorResponse(known);
    this.log.error({ err: error, method: req.method, path: req.path }, 'data API failure');
    return { status: 500, body: { code: ParseCode.INTERNAL_SERVER_ERROR, error: 'Internal server error.' } };
  }
}

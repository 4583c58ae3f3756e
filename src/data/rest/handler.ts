import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { parse as parseQuery } from 'fast-querystring';
import { parseQueryString } from './queryString.js';
import getRawBody from 'raw-body';
import type { Logger } from '../../log.js';
import type { DataApps } from '../apps.js';
import type { DataServices } from '../services.js';
import { asParseError, ParseCode, ParseError } from '../errors.js';
import type { CloudRegistry } from '../cloud/types.js';
import type { Auth } from '../auth/context.js';
import { isPlainObject } from '../values.js';
import { authenticate, readCredentials, SDK_BODY_FIELDS, unauthorized } from './credentials.js';
import { errorResponse, type DataRouter } from './router.js';
import { RequestTraffic } from './traffic.js';
import type { DataRequest, DataResponse } from './types.js';
import { MAX_NESTING, nestsDeeperThan } from '../nesting.js';

/** A data API answer, now or once something it waits for is done. */
type Answer = DataResponse | Promise<DataResponse>;

/**
 * Bodies read whole are at most this size: JSON, forms, and the JS SDK's base64 file uploads. A raw
 * file upload is streamed to the file store instead, within the app's `maxUploadSize`.
 */
export const DATA_BODY_LIMIT = 20 * 1024 * 1024;

const CREDENTIAL_HEADERS = ['Application-Id', 'REST-API-Key', 'JavaScript-Key', 'Client-Key', 'Windows-Key', 'Master-Key', 'Session-Token', 'Installation-Id', 'Client-Version', 'Revocable-Session', 'Request-Id'];

/**
 * CORS as Parse Server answers it: any origin may call the data API with the credential headers.
 * Allowed methods and headers matter only to a preflight (Fetch standard, "CORS-preflight fetch"), so
 * only OPTIONS carries them: every other answer stays some 700 bytes shorter.
 */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'X-Parse-Job-Status-Id, X-Parse-Push-Status-Id, X-Backend-Job-Status-Id',
};
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, PUT, POST, DELETE, OPTIONS',
  'access-control-allow-headers': [
    ...CREDENTIAL_HEADERS.flatMap((h) => [`X-Parse-${h}`, `X-Backend-${h}`]),
    'X-Requested-With',
    'Content-Type',
    'Pragma',
    'Cache-Control',
  ].join(', '),
  'access-control-max-age': '86400',
};
const JSON_TYPE = 'application/json; charset=utf-8';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);
/** Methods whose body is read; a GET or HEAD body is ignored, as Fastify and Parse Server do. */
const WITH_BODY = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** Content types of bodies that may be the JS SDK's JSON form of an upload (`isRawUpload`). */
const JSON_OR_TEXT = /^(application\/json|text\/plain)/;

/**
 * Whether a file POST carries the file's own bytes rather than the JS SDK's JSON form
 * (`{base64, _ContentType, _ApplicationId, ...}`). As Parse Server tells them apart: the JSON form
 * carries the app id in the body, raw uploads in a header; a JSON body that holds `base64` is the
 * JSON form whatever the headers say, so REST clients may use it with header credentials too.
 */
function isRawUpload(buffer: Buffer, contentType: string, headers: IncomingMessage['headers']): boolean {
  if (!JSON_OR_TEXT.test(contentType)) return true;
  const headerAppId = typeof headers['x-parse-application-id'] === 'string' || typeof headers['x-backend-application-id'] === 'string';
  if (!headerAppId) return false;
  try {
    const parsed: unknown = JSON.parse(buffer.toString('utf8'));
    return !(isPlainObject(parsed) && typeof parsed.base64 === 'string');
  } catch {
    return true;
  }
}

const FORM_TYPE = /^\s*application\/x-www-form-urlencoded\s*(;|$)/i;
const MULTIPART_TYPE = /^\s*multipart\/form-data\s*(;|$)/i;

/**
 * The body of a request that is not a raw upload. A form (`application/x-www-form-urlencoded`, what
 * `Parse.Cloud.httpRequest` and many HTTP clients send by default) is read as Parse Server's
 * `express.urlencoded({extended: false})` reads it, on every route: string values, a repeated key
 * an array of strings, no nesting (`a[b]` stays a key). A form body that is a JSON object (what
 * `curl -d '{...}'` sends) is read as JSON, where Parse Server takes the whole text for one field
 * name and answers 105. Any other body is JSON, whatever its type says, as Parse Server's
 * `express.json({type: () => true})`.
 * @returns the parsed body, undefined for an empty non-form body.
 * @throws ParseError 107 "Invalid JSON in the request body." for a body that is not JSON, or that nests
 *   deeper than MAX_NESTING (nesting.ts).
 */
function parseBody(buffer: Buffer, contentType: string): unknown {
  const text = buffer.toString('utf8');
  if (FORM_TYPE.test(contentType)) {
    if (text.trimStart().startsWith('{')) {
      try {
        const json: unknown = JSON.parse(text);
        if (isPlainObject(json)) return json;
      } catch {
        // not JSON: a form after all
      }
    }
    return { ...(parseQuery(text) as Record<string, unknown>) };
  }
  if (!buffer.length) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ParseError(ParseCode.INVALID_JSON, 'Invalid JSON in the request body.');
  }
  if (nestsDeeperThan(parsed)) throw new ParseError(ParseCode.INVALID_JSON, `Invalid JSON in the request body: objects and arrays nest more than ${MAX_NESTING} levels deep.`);
  return parsed;
}

/**
 * Routes answered without keys (Parse Server serves health, file downloads and the pages its mails
 * link to, `/apps/...`, to anyone): called for GET and POST with the path below the mount, the
 * query, a reader of the body that a route calls only for a path it answers, and the request's
 * headers (a download's `Range`).
 */
export type PublicRoute = (
  method: 'GET' | 'POST',
  path: string,
  query: Record<string, unknown>,
  body: () => Promise<Buffer>,
  headers: IncomingMessage['headers'],
) => DataResponse | undefined | Promise<DataResponse | undefined>;

export interface DataHandlerOptions {
  apps: DataApps;
  /** Cloud code, webhooks, schedules, mail, sign-in providers and the outbound client (services.ts). */
  services: DataServices;
  router: DataRouter;
  /** The data API's public root (`http://localhost:4000/data`), for Location headers and file URLs. */
  mountUrl: () => string;
  publicRoute?: PublicRoute;
  log: Logger;
}

/**
 * Answers one data API request on the raw Node objects; `target` is the request target below the
 * mount (`/classes/ToDo?where=...`). It never throws and never rejects.
 */
export type DataHandler = (req: IncomingMessage, res: ServerResponse, target: string) => void;

/** Reads the body of a POST, PUT, DELETE or PATCH as bytes, at most DATA_BODY_LIMIT. @throws ParseError 130/116 (413) when larger, 107 when unreadable. */
async function readBody(req: IncomingMessage, isFile: boolean): Promise<Buffer> {
  try {
    return await getRawBody(req, { limit: DATA_BODY_LIMIT, length: req.headers['content-length'] });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new ParseError(isFile ? ParseCode.FILE_TOO_LARGE : ParseCode.OBJECT_TOO_LARGE, `The request body is larger than ${DATA_BODY_LIMIT} bytes.`, 413);
    }
    throw new ParseError(ParseCode.INVALID_JSON, 'The request body could not be read (its length does not match Content-Length, or the client stopped sending it).');
  }
}

/**
 * The raw body of a file upload: the request itself, read as it arrives (an iterator that leaves the
 * request open when the route stops reading early, so that its error can still be answered), or
 * the bytes already read.
 */
function uploadOf(req: IncomingMessage, contentType: string, buffer: Buffer | undefined): NonNullable<DataRequest['raw']> {
  if (buffer) return { body: [buffer], contentType, length: buffer.length };
  const declared = Number(req.headers['content-length']);
  const length = req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) ? declared : undefined;
  return { body: req.iterator({ destroyOnReturn: false }), contentType, length };
}

/**
 * The data API (Interface B) on Node's own request and response objects, without a web framework's
 * per-request machinery in front (bench/data-api measures it against a bare `node:http` server).
 * It reads the body (JSON, the JS SDK's `text/plain` JSON with `_method` and credential fields, a
 * form: `parseBody`, or raw bytes for files), resolves the app and the caller's auth (docs/design.md, decision 6), hands the call
 * to the data router (find-my-way) and writes the answer in one write with Parse Server's CORS
 * headers. A failure of Backyard's own is a 500 Parse body and a log line, never a stack trace.
 */
export function createDataHandler(options: DataHandlerOptions): DataHandler {
  const { apps, services: context, router, mountUrl, log } = options;
  const publicRoute = options.publicRoute ?? (() => undefined);
  const traffic = new RequestTraffic();

  const send = (req: IncomingMessage, res: ServerResponse, answer: DataResponse): void => {
    if (answer.stream) return sendStream(req, res, answer, answer.stream);
    if (res.headersSent || res.destroyed) return;
    // A string goes out in the same write as the headers; a Buffer would take a second one.
    const payload = answer.raw ? answer.raw.data : (answer.json ?? JSON.stringify(answer.body));
    // Set one by one: an object spread per answer costs more than the few headers it holds.
    const headers: Record<string, string | number> = {
      'access-control-allow-origin': CORS_HEADERS['access-control-allow-origin'],
      'access-control-expose-headers': CORS_HEADERS['access-control-expose-headers'],
      'content-type': answer.raw ? answer.raw.contentType : JSON_TYPE,
      'content-length': typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length,
    };
    if (answer.headers) for (const name in answer.headers) headers[name] = answer.headers[name]!;
    res.writeHead(answer.status, headers);
    res.end(req.method === 'HEAD' ? undefined : payload);
  };

  /** Sends a streamed answer (a download): a stream that fails midway cuts the connection, as the length promised cannot be kept. */
  const sendStream = (req: IncomingMessage, res: ServerResponse, answer: DataResponse, stream: NonNullable<DataResponse['stream']>): void => {
    if (res.headersSent || res.destroyed) return void stream.body.destroy();
    const headers: Record<string, string | number> = {
      'access-control-allow-origin': CORS_HEADERS['access-control-allow-origin'],
      'access-control-expose-headers': CORS_HEADERS['access-control-expose-headers'],
      'content-type': stream.contentType,
      'content-length': stream.length,
    };
    if (answer.headers) for (const name in answer.headers) headers[name] = answer.headers[name]!;
    res.writeHead(answer.status, headers);
    if (req.method === 'HEAD') {
      stream.body.destroy();
      res.end();
      return;
    }
    pipeline(stream.body, res, (error) => {
      if (error && !res.destroyed) {
        log.warn({ err: error, url: req.url?.split('?')[0] }, 'a download stopped midway');
        res.destroy();
      }
    });
  };

  /**
   * The answer to a request: synchronous for what needs no storage (a public route, a refusal),
   * else a promise (storage is asynchronous: src/data/storage/adapter.ts). A write is answered once
   * it is on disk. @throws ParseError (or rejects with it) for a refused request.
   */
  const answer = (req: IncomingMessage, target: string): Answer => {
    const q = target.indexOf('?');
    let path = q < 0 ? target : target.slice(0, q);
    if (path === '' || path.endsWith('/')) path = path.replace(/\/+$/, '') || '/';
    const query = q < 0 ? {} : parseQueryString(target.slice(q + 1));
    const httpMethod = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    // A GraphQL multipart request (files: src/data/rest/multipart.ts) is an upload too: its bytes go to the route as they came.
    const isFilePost =
      httpMethod === 'POST' && (path === '/files' || path.startsWith('/files/') || (path === '/graphql' && MULTIPART_TYPE.test(String(req.headers['content-type'] ?? ''))));
    const withBody = (): Answer => {
      // A raw upload is read by its route, as it arrives (files.ts); the JS SDK's JSON form is read whole.
      if (isFilePost && !JSON_OR_TEXT.test(String(req.headers['content-type'] ?? ''))) return answerCall(req, path, query, httpMethod, isFilePost, undefined, true);
      if (!WITH_BODY.has(httpMethod)) {
        req.resume();
        return answerCall(req, path, query, httpMethod, isFilePost, undefined);
      }
      return readBody(req, isFilePost).then((buffer) => answerCall(req, path, query, httpMethod, isFilePost, buffer));
    };
    if (httpMethod === 'GET' || httpMethod === 'POST') {
      const publicAnswer = publicRoute(httpMethod, path, query, () => readBody(req, false), req.headers);
      if (publicAnswer instanceof Promise) return publicAnswer.then((answered) => answered ?? withBody());
      if (publicAnswer) return publicAnswer;
    }
    return withBody();
  };

  /** The call once its body (if any) is read: credentials, auth, the route, and the sync of a write. */
  const answerCall = (
    req: IncomingMessage,
    path: string,
    query: Record<string, unknown>,
    httpMethod: string,
    isFilePost: boolean,
    buffer: Buffer | undefined,
    streamed = false,
  ): Answer => {
    const contentType = String(req.headers['content-type'] ?? '');
    const isUpload = streamed || (isFilePost && buffer !== undefined && isRawUpload(buffer, contentType, req.headers));
    const json = buffer && !isUpload ? parseBody(buffer, contentType) : undefined;
    const bodyObject = isPlainObject(json) ? json : undefined;
    const override = typeof bodyObject?._method === 'string' ? bodyObject._method.toUpperCase() : undefined;
    const method = (override ?? httpMethod) as DataRequest['method'];
    if (!METHODS.has(method)) throw new ParseError(ParseCode.INVALID_JSON, `Unsupported method ${method}.`);

    const credentials = readCredentials(req.headers, bodyObject);
    if (!credentials.applicationId) throw unauthorized();
    const ready = apps.ready(credentials.applicationId);
    if (!ready) {
      // A cold app: read its keys and server options, open its engine, then answer as a warm one.
      return apps.services(credentials.applicationId).then((services) => {
        if (!services) throw unauthorized();
        return answerCall(req, path, query, httpMethod, isFilePost, buffer, streamed);
      });
    }
    const { keys, services } = ready;
    const engine = services.engine;
    const opened = engine.opened;
    if (opened) return opened.then(() => answerCall(req, path, query, httpMethod, isFilePost, buffer, streamed));

    let body: unknown = json;
    // Only the JS SDK's bodies carry these; a REST body is used as it came.
    if (bodyObject && SDK_BODY_FIELDS.some((field) => field in bodyObject)) {
      body = { ...bodyObject };
      for (const field of SDK_BODY_FIELDS) if (!(isFilePost && field === '_ContentType')) delete (body as Record<string, unknown>)[field];
    }
    const isRead = method === 'GET';
    const authenticated = authenticate(keys, credentials, services, !(method === 'GET' && path === '/sessions/me'));
    // Read later, maybe after the cloud code loads: a refused session must not count as unhandled meanwhile.
    if (authenticated instanceof Promise) authenticated.catch(() => undefined);
    const route = (registry: CloudRegistry, auth: Auth): Answer => {
      const result = router.dispatch({
        registry,
        method,
        path,
        query: isRead && isPlainObject(body) ? { ...query, ...body } : query,
        body: isRead ? undefined : body,
        raw: isUpload ? uploadOf(req, contentType, buffer) : undefined,
        auth,
        engine,
        services,
        keys,
        apps,
        context,
        mountUrl: mountUrl(),
      });
      if (isRead) return result;
      // A write is answered once it is on disk (durability.ts).
      return Promise.resolve(result).then((written) => engine.durable(traffic.alone()).then(() => written));
    };
    const withAuth = (registry: CloudRegistry): Answer =>
      authenticated instanceof Promise ? authenticated.then((auth) => route(registry, auth)) : route(registry, authenticated);
    const registry = context.cloud.registryNow(keys.applicationId);
    return registry ? withAuth(registry) : context.cloud.registry(keys.applicationId).then(withAuth);
  };

  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown): void => {
    const known = asParseError(error);
    if (known) {
      // A body left unread (too large) would be taken for the next request on this connection; it
      // is read to its end and dropped, so that closing does not reset the connection under the
      // client before it reads the answer.
      if (known.httpStatus === 413) {
        res.shouldKeepAlive = false;
        req.resume();
      }
      return send(req, res, errorResponse(known));
    }
    log.error({ err: error, method: req.method, url: req.url?.split('?')[0] }, 'data API failure');
    send(req, res, { status: 500, body: { code: ParseCode.INTERNAL_SERVER_ERROR, error: 'Internal server error.' } });
  };

  return (req, res, target) => {
    traffic.begin(req.socket);
    if (req.method === 'OPTIONS') {
      req.resume();
      res.writeHead(200, { ...PREFLIGHT_HEADERS, 'content-length': 0 });
      res.end();
      return;
    }
    let result: Answer;
    try {
      result = answer(req, target);
    } catch (error) {
      return fail(req, res, error);
    }
    if (result instanceof Promise) result.then((answered) => send(req, res, answered), (error: unknown) => fail(req, res, error));
    else send(req, res, result);
  };
}

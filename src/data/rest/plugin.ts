import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DataApps } from '../apps.js';
import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';
import { authenticate, readCredentials, SDK_BODY_FIELDS, unauthorized } from './credentials.js';
import { errorResponse, type DataRouter } from './router.js';
import type { DataRequest, DataResponse } from './types.js';

/** Uploads up to this size are accepted (files); JSON bodies are parsed from the same buffer. */
export const DATA_BODY_LIMIT = 20 * 1024 * 1024;

const CREDENTIAL_HEADERS = ['Application-Id', 'REST-API-Key', 'JavaScript-Key', 'Client-Key', 'Windows-Key', 'Master-Key', 'Session-Token', 'Installation-Id', 'Client-Version', 'Revocable-Session', 'Request-Id'];

/** CORS as Parse Server answers it: any origin may call the data API with the credential headers. */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, PUT, POST, DELETE, OPTIONS',
  'access-control-allow-headers': [
    ...CREDENTIAL_HEADERS.flatMap((h) => [`X-Parse-${h}`, `X-Backend-${h}`]),
    'X-Requested-With',
    'Content-Type',
    'Pragma',
    'Cache-Control',
  ].join(', '),
  'access-control-expose-headers': 'X-Parse-Job-Status-Id, X-Parse-Push-Status-Id, X-Backend-Job-Status-Id',
};

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/**
 * Whether a file POST carries the file's own bytes rather than the JS SDK's JSON form
 * (`{base64, _ContentType, _ApplicationId, ...}`). As Parse Server tells them apart: the JSON form
 * carries the app id in the body, raw uploads in a header; a JSON body that holds `base64` is the
 * JSON form whatever the headers say, so REST clients may use it with header credentials too.
 */
function isRawUpload(buffer: Buffer, contentType: string, headers: Record<string, unknown>): boolean {
  if (!/^(application\/json|text\/plain)/.test(contentType)) return true;
  const headerAppId = typeof headers['x-parse-application-id'] === 'string' || typeof headers['x-backend-application-id'] === 'string';
  if (!headerAppId) return false;
  try {
    const parsed: unknown = JSON.parse(buffer.toString('utf8'));
    return !(isPlainObject(parsed) && typeof parsed.base64 === 'string');
  } catch {
    return true;
  }
}

/** Routes answered without keys: Parse Server serves health and file downloads to anyone. */
export type PublicRoute = (path: string, request: FastifyRequest) => DataResponse | undefined | Promise<DataResponse | undefined>;

/**
 * Mounts the data API (Interface B) at the plugin's prefix (`/data`): reads the body (JSON,
 * the JS SDK's `text/plain` JSON with `_method` and credential fields, or raw bytes for files),
 * resolves the app and the caller's auth, and hands the call to the data router.
 */
export function dataApi(apps: DataApps, router: DataRouter, mountUrl: () => string, publicRoute: PublicRoute = () => undefined) {
  const send = (reply: FastifyReply, res: DataResponse) => {
    reply.code(res.status).headers(CORS_HEADERS);
    if (res.headers) reply.headers(res.headers);
    if (res.raw) return reply.type(res.raw.contentType).send(res.raw.data);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(res.body));
  };

  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: DATA_BODY_LIMIT }, (_req, body, done) => done(null, body));
    app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        const code = request.url.includes('/files/') ? ParseCode.FILE_TOO_LARGE : ParseCode.OBJECT_TOO_LARGE;
        return send(reply, errorResponse(new ParseError(code, `The request body is larger than ${DATA_BODY_LIMIT} bytes.`, 413)));
      }
      request.log.error({ err: error }, 'data API failure');
      return send(reply, { status: 500, body: { code: ParseCode.INTERNAL_SERVER_ERROR, error: 'Internal server error.' } });
    });

    app.options('/*', (_request, reply) => reply.code(200).headers(CORS_HEADERS).send());
    app.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], url: '/*', handler: async (request, reply) => {
      const path = `/${(request.params as { '*': string })['*']}`.replace(/\/+$/, '') || '/';
      const publicAnswer = request.method === 'GET' ? await publicRoute(path, request) : undefined;
      if (publicAnswer) return send(reply, publicAnswer);

      const buffer = Buffer.isBuffer(request.body) ? request.body : undefined;
      const contentType = String(request.headers['content-type'] ?? '');
      const isFilePost = request.method === 'POST' && path.startsWith('/files/');
      const isUpload = isFilePost && buffer !== undefined && isRawUpload(buffer, contentType, request.headers);
      let json: unknown;
      if (buffer?.length && !isUpload) {
        try {
          json = JSON.parse(buffer.toString('utf8'));
        } catch {
          return send(reply, errorResponse(new ParseError(ParseCode.INVALID_JSON, 'Invalid JSON in the request body.')));
        }
      }
      const bodyObject = isPlainObject(json) ? json : undefined;
      const override = typeof bodyObject?._method === 'string' ? bodyObject._method.toUpperCase() : undefined;
      const method = (override ?? request.method) as DataRequest['method'];
      if (!METHODS.has(method)) return send(reply, errorResponse(new ParseError(ParseCode.INVALID_JSON, `Unsupported method ${method}.`)));

      const credentials = readCredentials(request.headers, bodyObject);
      const keys = credentials.applicationId ? apps.keys(credentials.applicationId) : undefined;
      const engine = keys && apps.engine(keys.applicationId);
      if (!keys || !engine) return send(reply, errorResponse(unauthorized()));

      let body: unknown = json;
      if (bodyObject) {
        body = { ...bodyObject };
        for (const field of SDK_BODY_FIELDS) if (!(isFilePost && field === '_ContentType')) delete (body as Record<string, unknown>)[field];
      }
      const query = { ...(request.query as Record<string, unknown>) };
      const isRead = method === 'GET';
      let auth;
      try {
        auth = authenticate(keys, credentials, engine.storage);
      } catch (error) {
        return send(reply, router.failure(error, { method, path }));
      }
      const registry = await apps.cloud.registry(keys.applicationId);
      const res = await router.dispatch({
        registry,
        method,
        path,
        query: isRead && isPlainObject(body) ? { ...query, ...body } : query,
        body: isRead ? undefined : body,
        raw: isUpload && buffer ? { data: buffer, contentType } : undefined,
        auth,
        engine,
        keys,
        apps,
        mountUrl: mountUrl(),
      });
      if (method !== 'GET') await engine.storage.durable();
      return send(reply, res);
    } });
  };
}

import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { AnyOperation } from '../../tools/operation.js';
import { failureFor, invokeOperation } from '../../tools/invoke.js';
import type { Platform } from '../platform/platform.js';
import { authenticateBearer } from './auth.js';
import { openApiDocument } from './openapi.js';
import { queryFieldTypes, restInput } from './restInput.js';
import { packageVersion } from '../version.js';

const sendText = (reply: FastifyReply, status: number, text: string) =>
  reply.code(status).type('text/plain; charset=utf-8').send(text);

/**
 * Mounts the management REST API (Interface A) from the operation table: one route per built
 * operation, bearer authentication, validation and `text/plain` errors with only the codes the
 * operation lists; and `GET /openapi.json`. Register with the prefix `/v1`.
 */
export function managementApi(platform: Platform, ops: readonly AnyOperation[]) {
  return async (app: FastifyInstance) => {
    const { services, log } = platform;

    // An empty body is no body (POST without one, e.g. activateWebHosting); anything else must parse.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
      if (typeof text !== 'string' || text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        const error = new Error('The request body is not valid JSON.') as FastifyError;
        error.statusCode = 400;
        done(error, undefined);
      }
    });

    app.setErrorHandler((error: FastifyError, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 500) {
        log.error({ err: error, url: request.url }, 'management API failure');
        return sendText(reply, 500, failureFor(error, undefined).text);
      }
      // Framework refusals (415 media type, 413 size) are client mistakes; the spec lists 400 for them.
      const text =
        error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'Send the request body as JSON with "Content-Type: application/json".'
          : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'The request body is too large.'
            : error.message;
      return sendText(reply, 400, text);
    });

    app.setNotFoundHandler((request, reply) =>
      sendText(reply, 404, `No operation answers ${request.method} ${request.url.split('?')[0]}. The operations are listed in /v1/openapi.json.`),
    );

    app.get('/openapi.json', async () => openApiDocument(ops, services.urls.managementApi, packageVersion()));

    for (const op of ops) {
      const types = queryFieldTypes(op);
      app.route({
        method: op.method,
        url: op.path.replace(/\{(\w+)\}/g, ':$1'),
        handler: async (request, reply) => {
          try {
            const { account, limits } = await authenticateBearer(request.headers.authorization, services.accounts);
            const input = restInput(
              op,
              request.params as Record<string, string>,
              request.query as Record<string, unknown>,
              request.body,
              types,
            );
            const controller = new AbortController();
            // The request stream closes once its body is read; only a response closed before it finished means the caller left.
            reply.raw.once('close', () => {
              if (!reply.raw.writableFinished) controller.abort();
            });
            const output = await invokeOperation(op, input, { account, services, signal: controller.signal, limits });
            if (!op.restBody) return reply.code(op.successStatus).send(output);
            const body = output[op.restBody.key];
            return op.restBody.text ? sendText(reply, op.successStatus, String(body)) : reply.code(op.successStatus).send(body);
          } catch (error) {
            const failure = failureFor(error, op);
            if (failure.internal) log.error({ err: error, operation: op.name }, 'operation failed');
            if (failure.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="backyard"');
            return sendText(reply, failure.status, failure.text);
          }
        },
      });
    }
  };
}

import type { Logger } from '../../../log.js';
import { appGraphQLSchema } from '../../graphql/appSchema.js';
import { parseError, type DataCall, type GraphQLContext } from '../../graphql/context.js';
import { answerGraphQL, type GraphQLParams } from '../../graphql/execute.js';
import { Upload } from '../../graphql/uploads.js';
import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import { MultipartError, readGraphQLMultipart } from '../multipart.js';
import { DATA_BODY_LIMIT } from '../handler.js';
import type { UploadBody } from '../../files.js';
import type { DataRouter } from '../router.js';
import type { DataRequest, DataResponse } from '../types.js';

/**
 * A multipart request's bytes, read whole as the multipart reader takes them, or undefined past the
 * data API's body limit (DATA_BODY_LIMIT, as before the files route streamed its uploads).
 */
async function readWhole(body: UploadBody, length: number | undefined): Promise<Buffer | undefined> {
  if (length !== undefined && length > DATA_BODY_LIMIT) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > DATA_BODY_LIMIT) return undefined;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/**
 * The GraphQL context of a data API request: each call is dispatched through the data API's own
 * routes with the request's credentials (or with a session just opened), so GraphQL passes every
 * check, trigger and limit that REST does; an error answer becomes a GraphQL error with its Parse code.
 */
function requestContext(req: DataRequest, router: DataRouter): GraphQLContext {
  const write = async (call: DataCall) => {
    const auth = call.sessionToken ? await req.services.sessions.clientAuth(call.sessionToken, req.auth.installationId) : req.auth;
    const raw = call.raw && { body: [call.raw.data], contentType: call.raw.contentType, length: call.raw.data.length };
    const answer = await router.dispatch({ ...req, method: call.method, path: call.path, query: call.query ?? {}, body: call.body, raw, auth, stored: call.stored, readsObjects: true });
    if (answer.status >= 400) {
      const body = isPlainObject(answer.body) ? answer.body : {};
      throw parseError(typeof body.code === 'number' ? body.code : ParseCode.INTERNAL_SERVER_ERROR, typeof body.error === 'string' ? body.error : 'Internal server error.');
    }
    return { body: answer.body, stored: answer.stored };
  };
  return {
    master: req.auth.master,
    sessionToken: req.auth.sessionToken,
    maxLimit: req.engine.settings().maxLimit,
    call: async (call: DataCall) => (await write(call)).body,
    write,
    async confirmResetPassword(token: string, password: string) {
      let changed: boolean;
      try {
        changed = await req.services.users.resetPassword(token, password);
      } catch (error) {
        if (error instanceof ParseError) throw parseError(error.code, error.message);
        throw error;
      }
      if (!changed) throw parseError(ParseCode.OBJECT_NOT_FOUND, 'Failed to reset password: the token is unknown, spent or expired. Request a new one with resetPassword.');
    },
  };
}

/**
 * `GET` and `POST /graphql`: Parse's GraphQL API of the app the credentials choose (docs/design.md,
 * "Parse clients we serve, not rebuild"), on the schema built from its classes (src/data/graphql). The front serves it
 * at `/graphql` on the data API's host as Parse Server does, and at `<data API>/graphql`. A POST may be
 * a GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec) with
 * files for `Upload` variables; a body the spec does not allow is a 400 (413 for a field too large).
 * The app's cloud functions (the request's registry) are `callCloudCode`'s enum.
 */
export function graphQLRoutes(router: DataRouter, log: Logger): void {
  const answer = async (req: DataRequest): Promise<DataResponse> => {
    const ctx = requestContext(req, router);
    let params = (req.method === 'GET' ? req.query : req.body) as GraphQLParams;
    if (req.method === 'POST' && req.raw) {
      // A multipart request (the handler passes its bytes as they came): its files become Upload values.
      try {
        const bytes = await readWhole(req.raw.body, req.raw.length);
        if (!bytes) return { status: 413, body: { code: ParseCode.FILE_TOO_LARGE, error: `The request body is larger than ${DATA_BODY_LIMIT} bytes.` } };
        params = await readGraphQLMultipart(bytes, req.raw.contentType, (file) => new Upload(file.filename, file.mimetype, file.data, ctx));
      } catch (error) {
        if (!(error instanceof MultipartError)) throw error;
        return { status: error.status, body: { errors: [{ message: error.message, extensions: { code: 'BAD_REQUEST' } }] } };
      }
    } else if (req.method === 'POST' && !isPlainObject(req.body)) {
      return { status: 400, body: { errors: [{ message: 'The POST body must be a JSON object with `query`, and optionally `variables` and `operationName`.', extensions: { code: 'BAD_REQUEST' } }] } };
    }
    const schema = appGraphQLSchema(req.engine.schema, req.registry.functions);
    const { status, body } = await answerGraphQL(schema, params, req.method === 'GET' ? 'GET' : 'POST', ctx, (err) =>
      log.error({ err, path: req.path }, 'GraphQL resolver failure'),
    );
    return { status, body };
  };
  router.on(['GET', 'POST'], '/graphql', answer);
}

import {
  execute,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import type { GraphQLContext } from './context.js';

/**
 * A document that parsed and validated against a schema, and, once it came again, its operations
 * compiled by graphql-jit (by operation name; null for one graphql-jit could not compile, which
 * graphql-js keeps executing).
 */
interface ValidDocument {
  document: DocumentNode;
  /** The document's text length. */
  length: number;
  /** Undefined until the document's second request. */
  compiled?: Map<string, CompiledQuery | null>;
}

/**
 * Documents that parsed and validated against a schema, by their text: clients send the same few
 * documents over and over with other variables, and validation costs more than the execution of a
 * small query (a CPU profile of `gameScores(where, first: 10)`: validate 11% of the server's time,
 * execute 8%). Bounded per schema by count and by text length; a schema built again (its app's
 * classes changed) starts empty, its old cache collected with it.
 */
const validDocuments = new WeakMap<GraphQLSchema, LRUCache<string, ValidDocument>>();
const DOCUMENTS_PER_SCHEMA = 500;
const DOCUMENT_TEXT_PER_SCHEMA = 4 * 1024 * 1024;
/**
 * The longest document whose operations are compiled: the code graphql-jit writes grows with the
 * document, and the cache bounds texts, not code; clients' real documents are a few KB.
 */
const COMPILED_TEXT_MAX = 32 * 1024;

/**
 * The document of `query` when it parses and is valid against `schema` (from the cache when seen
 * before), else the answer refusing it: 400 with Apollo's GRAPHQL_PARSE_FAILED or GRAPHQL_VALIDATION_FAILED.
 */
function validDocument(schema: GraphQLSchema, query: string, hideHints: boolean): ValidDocument | GraphQLAnswer {
  let cache = validDocuments.get(schema);
  const cached = cache?.get(query);
  if (cached) {
    cached.compiled ??= new Map();
    return cached;
  }
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    const e = error as GraphQLError;
    return { status: 400, body: { errors: [{ message: e.message, locations: e.locations, extensions: { code: REQUEST_ERROR.parse } }] } };
  }
  const invalid = validate(schema, document);
  if (invalid.length) {
    return { status: 400, body: { errors: invalid.map((e) => ({ message: hideHints ? withoutHints(e.message) : e.message, locations: e.locations, extensions: { code: REQUEST_ERROR.validation } })) } };
  }
  if (!cache) {
    cache = new LRUCache<string, ValidDocument>({ max: DOCUMENTS_PER_SCHEMA, maxSize: DOCUMENT_TEXT_PER_SCHEMA, sizeCalculation: (_, text) => text.length || 1 });
    validDocuments.set(schema, cache);
  }
  const valid: ValidDocument = { document, length: query.length };
  if (query.length <= DOCUMENT_TEXT_PER_SCHEMA / 8) cache.set(query, valid);
  return valid;
}

/**
 * The operation `operationName` of a document seen before, compiled by graphql-jit
 * (https://github.com/zalando-incubator/graphql-jit): one JavaScript function per operation, which
 * answers as graphql-js's `execute` does without building its per-field argument and result
 * dictionaries (a GraphQL find of 10 objects allocated 111 KB against REST's 42 KB, and cost twice
 * REST's CPU, most of it graphql-js's execution and its garbage). Compiled on a document's second
 * request, so that a document sent once (or a client sending ever new ones) pays no compilation;
 * undefined then, for a document longer than COMPILED_TEXT_MAX, and for an operation graphql-jit
 * cannot compile.
 */
function compiledOperation(schema: GraphQLSchema, valid: ValidDocument, operationName: string | undefined): CompiledQuery | undefined {
  if (!valid.compiled || valid.length > COMPILED_TEXT_MAX) return undefined;
  const key = operationName ?? '';
  let compiled = valid.compiled.get(key);
  if (compiled === undefined) {
    const made = compileQuery(schema, valid.document, operationName);
    compiled = isCompiledQuery(made) ? made : null;
    valid.compiled.set(key, compiled);
  }
  return compiled ?? undefined;
}

/** The parameters of a GraphQL-over-HTTP request: a POST body, or a GET's query string (variables as JSON text). */
export interface GraphQLParams {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** An answer: the HTTP status and the JSON body (`{data, errors}` or `{errors}`). */
export interface GraphQLAnswer {
  status: number;
  body: { data?: unknown; errors?: GraphQLFormattedError[] };
}

/** Codes of the request errors, as Apollo Server (which Parse Server 9 runs) writes them under `extensions.code`. */
const REQUEST_ERROR = {
  badRequest: 'BAD_REQUEST',
  parse: 'GRAPHQL_PARSE_FAILED',
  validation: 'GRAPHQL_VALIDATION_FAILED',
  input: 'BAD_USER_INPUT',
  operation: 'OPERATION_RESOLUTION_FAILURE',
  internal: 'INTERNAL_SERVER_ERROR',
} as const;

const refuse = (status: number, message: string, code: string): GraphQLAnswer => ({ status, body: { errors: [{ message, extensions: { code } }] } });

/** Whether the document asks for the schema (`__schema`, or `__type(name:)`), which only the master key may (Parse Server's `graphQLPublicIntrospection` is off by default). */
function introspects(document: DocumentNode): boolean {
  const walk = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some((s) => {
      if (s.kind === Kind.FIELD && (s.name.value === '__schema' || (s.name.value === '__type' && (s.arguments?.length ?? 0) > 0))) return true;
      return 'selectionSet' in s && walk(s.selectionSet);
    });
  return document.definitions.some((d) => 'selectionSet' in d && walk(d.selectionSet));
}

/** graphql-js's "Did you mean …?" hints name classes and fields: dropped for callers who may not introspect, as Parse Server drops them. */
const withoutHints = (message: string) => message.replace(/ ?Did you mean(.+?)\?$/, '');

/** graphql-js's and graphql-jit's words for a resolver's null in a non-null field. */
const NON_NULL_FAILURE = /^Cannot return null for non-nullable field /;

/**
 * An execution error as Parse Server answers it: a Parse error keeps its numeric code, any other
 * failure of a resolver is code 1 "Internal server error" (parse-server src/GraphQL/parseGraphQLUtils.js);
 * an error of graphql-js itself (a scalar that cannot be shown) carries Apollo's INTERNAL_SERVER_ERROR.
 */
function formatError(error: GraphQLError, hideHints: boolean, onInternal: (error: unknown) => void): GraphQLFormattedError {
  // graphql-js reports a null in a non-null field as a plain Error it wraps, graphql-jit as an error
  // of its own without one: both are a failure of the server's, answered alike.
  const original = error.originalError ?? (error.extensions === undefined && NON_NULL_FAILURE.test(error.message) ? new Error(error.message) : undefined);
  const message = hideHints ? withoutHints(error.message) : error.message;
  if (original && !(original instanceof GraphQLError)) {
    onInternal(original);
    return { message: 'Internal server error', locations: error.locations, path: error.path, extensions: { code: 1 } };
  }
  // graphql-jit leaves `extensions` out of its own errors (a null for a non-null field, a value a scalar cannot show).
  const code = (original instanceof GraphQLError ? original.extensions?.code : error.extensions?.code) ?? REQUEST_ERROR.internal;
  return { message, locations: error.locations, path: error.path, extensions: { code } };
}

/**
 * Answers one GraphQL request on an app's schema, as Parse Server's GraphQL endpoint (Apollo
 * Server) answers it: 400 with `extensions.code` for a request that is no GraphQL (no query,
 * variables that are no object), a syntax error, an invalid document or variables that do not fit;
 * 405 for a mutation sent with GET; 403 for introspection without the master key; otherwise 200
 * with `data` and the resolvers' errors, each with its path and the Parse error code.
 * @param onInternal told of a resolver's failure that is not a Parse error (for the log).
 */
export async function answerGraphQL(
  schema: GraphQLSchema,
  params: GraphQLParams,
  method: 'GET' | 'POST',
  ctx: GraphQLContext,
  onInternal: (error: unknown) => void = () => undefined,
): Promise<GraphQLAnswer> {
  const hideHints = !ctx.master;
  const { query, operationName } = params;
  let variables = params.variables;
  if (typeof query !== 'string' || query === '') {
    return refuse(400, 'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.', REQUEST_ERROR.badRequest);
  }
  if (typeof variables === 'string') {
    try {
      variables = JSON.parse(variables);
    } catch {
      return refuse(400, '`variables` must be an object, or its JSON text (as a GET request sends it).', REQUEST_ERROR.badRequest);
    }
  }
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    return refuse(400, '`variables` must be an object.', REQUEST_ERROR.badRequest);
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return refuse(400, '`operationName` must be a string.', REQUEST_ERROR.badRequest);
  }
  const valid = validDocument(schema, query, hideHints);
  if ('status' in valid) return valid;
  const { document } = valid;
  const operation = getOperationAST(document, (operationName as string | undefined) ?? undefined);
  if (!operation) {
    const message = operationName ? `Unknown operation named "${operationName}".` : 'Must provide operation name if query contains multiple operations.';
    return refuse(400, message, REQUEST_ERROR.operation);
  }
  if (method === 'GET' && operation.operation !== 'query') {
    return refuse(405, `Can only perform a ${operation.operation} operation from a POST request.`, REQUEST_ERROR.badRequest);
  }
  if (!ctx.master && introspects(document)) return refuse(403, 'Introspection is not allowed', REQUEST_ERROR.internal);
  const variableValues = (variables ?? undefined) as Record<string, unknown> | undefined;
  const compiled = compiledOperation(schema, valid, (operationName as string | undefined) ?? undefined);
  let result: ExecutionResult | undefined = compiled && (await compiled.query(undefined, ctx, variableValues));
  // Variables that do not fit stop graphql-jit before any resolver runs: graphql-js says why in its
  // own words, as Parse Server's Apollo does.
  if (!result || !('data' in result)) {
    result = await execute({ schema, document, contextValue: ctx, variableValues, operationName: (operationName as string | undefined) ?? undefined });
  }
  // Variables that do not fit their types end execution before it starts: no data, 400.
  if (!('data' in result) || result.data === undefined) {
    return { status: 400, body: { errors: (result.errors ?? []).map((e) => ({ message: hideHints ? withoutHints(e.message) : e.message, locations: e.locations, extensions: { code: REQUEST_ERROR.input } })) } };
  }
  const body: GraphQLAnswer['body'] = { data: result.data };
  if (result.errors?.length) body.errors = result.errors.map((e) => formatError(e, hideHints, onInternal));
  return { status: 200, body };
}

import { z } from 'zod';
import { bodyFields, pathParams, type AnyOperation } from '../../tools/operation.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid; the text says which field and why',
  401: 'Missing or wrong bearer token',
  403: 'The path is outside cloud/ and public/',
  404: 'No such resource in this account',
  500: 'Backyard or a part it needs (such as the Docker engine) failed; the text says what',
};

type JsonSchema = Record<string, unknown>;

const jsonSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

const inputSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

/**
 * The OpenAPI 3.1 document of the management API, generated from the operation table: one operation per routed table entry, its parameters, body, success and error answers.
 * `serverUrl` is `{base_url}` (`<public url>/v1`).
 */
export function openApiDocument(ops: readonly AnyOperation[], serverUrl: string, version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    const shape = op.input.shape as Record<string, z.ZodType>;
    const parameters = [
      ...pathParams(op).map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: inputSchema(shape[name]!),
      })),
      ...Object.entries(op.query ?? {}).map(([name, field]) => ({
        name,
        in: 'query',
        required: false,
        schema: inputSchema(shape[field]!),
      })),
    ];
    const body = bodyFields(op);
    const successSchema = op.restBody ? jsonSchema((op.output.shape as Record<string, z.ZodType>)[op.restBody.key]!) : jsonSchema(op.output);
    const responses: Record<string, unknown> = {
      [op.successStatus]: {
        description: op.title,
        content: op.restBody?.text
          ? { 'text/plain': { schema: { type: 'string' } } }
          : { 'application/json': { schema: successSchema } },
      },
    };
    for (const status of op.errors) {
      responses[status] = {
        description: STATUS_TEXT[status],
        content: { 'text/plain': { schema: { type: 'string' } } },
      };
    }
    paths[op.path] ??= {};
    paths[op.path]![op.method.toLowerCase()] = {
      operationId: op.name,
      summary: op.title,
      description: op.description,
      ...(parameters.length ? { parameters } : {}),
      ...(body.length
        ? {
            requestBody: {
              required: body.some((f) => !shape[f]!.safeParse(undefined).success),
              content: { 'application/json': { schema: inputSchema(op.input.pick(Object.fromEntries(body.map((f) => [f, true])))) } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Backyard management API',
      version,
      description: 'Interface A: guides, development environments, Backend Apps, cloud code, Web Apps and deployments.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An account token from `backyard account create <login>`' },
      },
    },
    paths,
  };
}

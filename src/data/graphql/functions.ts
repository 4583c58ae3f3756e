import { GraphQLEnumType, GraphQLNonNull, type GraphQLFieldConfig } from 'graphql';
import { mutationWithClientMutationId } from 'graphql-relay';
import type { GraphQLContext } from './context.js';
import * as T from './types.js';

type Source = Record<string, any>;

/**
 * Whether a cloud function's name can be a value of the `CloudCodeFunction` enum: Parse Server's
 * rule (`/^[_a-zA-Z][_a-zA-Z0-9]*$/`, parse-server src/GraphQL/ParseGraphQLSchema.js
 * `_getFunctionNames`), less the names graphql-js refuses as enum values (`true`, `false`, `null`,
 * and names beginning with `__`), which would make the whole schema invalid.
 */
export const isEnumFunctionName = (name: string): boolean => /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !name.startsWith('__') && !['true', 'false', 'null'].includes(name);

/** Type names `callCloudCode` brings into the schema (reserved against class names, schema.ts). */
export const FUNCTION_TYPE_NAMES = ['CloudCodeFunction', 'CallCloudCodeInput', 'CallCloudCodePayload'];

/**
 * Parse Server 9's `callCloudCode(input: {functionName, params, clientMutationId})` →
 * `{result, clientMutationId}` (parse-server src/GraphQL/loaders/functionsMutations.js), with
 * `functionName` an enum `CloudCodeFunction` of the app's cloud functions (its code's and its
 * webhooks', in the order registered). The call is the data API's `POST /functions/<name>` with
 * `params` as the body, so the caller, triggers and errors (141, a thrown `Parse.Error`'s code)
 * are REST's. Parse omits the mutation when the app has no function: so does this (undefined).
 * @param functionNames the app's function names (CloudRegistry.functions); names that cannot be
 *   enum values (isEnumFunctionName) are left out, as Parse Server leaves them out.
 */
export function cloudCodeMutation(functionNames: readonly string[]): GraphQLFieldConfig<Source, GraphQLContext> | undefined {
  const names = [...new Set(functionNames.filter(isEnumFunctionName))];
  if (names.length === 0) return undefined;
  const functionEnum = new GraphQLEnumType({
    name: 'CloudCodeFunction',
    description: 'The CloudCodeFunction enum type contains a list of all available cloud code functions.',
    values: Object.fromEntries(names.map((name) => [name, { value: name }])),
  });
  return mutationWithClientMutationId({
    name: 'CallCloudCode',
    description: 'The callCloudCode mutation can be used to invoke a cloud code function.',
    inputFields: {
      functionName: { type: new GraphQLNonNull(functionEnum), description: 'This is the function to be called.' },
      params: { type: T.OBJECT, description: 'These are the params to be passed to the function.' },
    },
    outputFields: { result: { type: T.ANY, description: 'This is the result value of the cloud code function execution.' } },
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      const answer = await ctx.call({ method: 'POST', path: `/functions/${encodeURIComponent(input.functionName)}`, body: input.params ?? {} });
      return { result: answer.result };
    },
  });
}

import {
  GraphQLBoolean,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  type GraphQLFieldConfigMap,
} from 'graphql';
import { fromGlobalId, mutationWithClientMutationId, nodeDefinitions } from 'graphql-relay';
import pluralize from 'pluralize';
import type { FieldType } from '../types.js';
import { classTypes, graphQLClassName, payloadPaths, type Build, type ClassTypes } from './classTypes.js';
import type { GraphQLContext } from './context.js';
import { nestedCreate, toParseFields } from './inputs.js';
import { createObject, deleteObject, findObjects, getObject, updateObject, type FindArgs } from './objects.js';
import { selectedPaths } from './selection.js';
import * as T from './types.js';
import { schemaOperations, SCHEMA_FIELD_TYPES, SCHEMA_TYPE_NAMES } from './schemaTypes.js';
import { createFileMutation } from './uploads.js';
import { cloudCodeMutation, FUNCTION_TYPE_NAMES } from './functions.js';
import { USER_EMAIL_TYPE_NAMES, userEmailMutations } from './userEmails.js';
import { userOperations } from './users.js';
import { objectIdOf } from './where.js';

/** One class of the app's schema: its name and every field with its type (Schema.fields). */
export interface SchemaClass {
  className: string;
  fields: Readonly<Record<string, FieldType>>;
}

/** Parse's GraphQL query names of a class: `gameScore` and `gameScores` for `GameScore`, `user`/`users` for `_User`. */
export function queryNames(graphQLName: string): { get: string; find: string } {
  const get = graphQLName.charAt(0).toLowerCase() + graphQLName.slice(1);
  return { get, find: pluralize(get) };
}

type Source = Record<string, any>;

/** Type names the schema itself uses (Parse Server reserves these and its built-in types' names the same way). */
const RESERVED_TYPES = new Set([
  'String', 'Boolean', 'Int', 'Float', 'ID', 'Any', 'Object', 'Date', 'Bytes', 'File', 'FileInfo', 'FileInput', 'GeoPoint', 'GeoPointInput',
  'ACL', 'ACLInput', 'UserACL', 'UserACLInput', 'RoleACL', 'RoleACLInput', 'PublicACL', 'PublicACLInput', 'ParseObject', 'Node', 'PageInfo',
  'Element', 'ArrayResult', 'Query', 'Mutation', 'Subscription', 'Viewer', 'ReadPreference', 'ReadOptionsInput', 'SearchInput', 'TextInput',
  'BoxInput', 'WithinInput', 'CenterSphereInput', 'GeoWithinInput', 'GeoIntersectsInput', 'SubqueryInput', 'SelectInput', 'KeyValueInput',
  'SignUpInput', 'SignUpPayload', 'LogInInput', 'LogInPayload', 'LogOutInput', 'LogOutPayload', 'LogInWithInput', 'LogInWithPayload', 'UserLoginWithInput',
  ...USER_EMAIL_TYPE_NAMES, ...FUNCTION_TYPE_NAMES,
  ...['Id', 'String', 'Number', 'Boolean', 'Array', 'Object', 'Date', 'Bytes', 'File', 'GeoPoint', 'Polygon'].map((t) => `${t}WhereInput`),
  ...SCHEMA_TYPE_NAMES, 'Upload', 'CreateFileInput', 'CreateFilePayload',
]);
/** Query names the schema itself uses. */
const RESERVED_QUERIES = new Set(['health', 'viewer', 'node', 'class', 'classes', 'cloudConfig']);

/** Every type name a class brings into the schema (classTypes.ts, and its mutations' inputs and payloads). */
const typeNamesOf = (name: string) => [
  name, `Create${name}FieldsInput`, `Update${name}FieldsInput`, `${name}PointerInput`, `${name}RelationInput`, `${name}WhereInput`,
  `${name}RelationWhereInput`, `${name}Order`, `${name}Connection`, `${name}Edge`,
  ...['Create', 'Update', 'Delete'].flatMap((op) => [`${op}${name}Input`, `${op}${name}Payload`]),
];

/**
 * The classes that can have types: a class whose GraphQL names would collide with the schema's own or
 * with an earlier class's (`User` beside `_User`) is left out, as Parse Server leaves it out (with a
 * warning in its log), so that one odd class name does not take the whole API down.
 */
function withoutCollisions(sorted: readonly SchemaClass[]): SchemaClass[] {
  const taken = new Set(RESERVED_TYPES);
  const queries = new Set(RESERVED_QUERIES);
  const kept: SchemaClass[] = [];
  // `_User` first, as Parse Server takes it: its names win over a class called `User`.
  for (const cls of [...sorted.filter((c) => c.className === '_User'), ...sorted.filter((c) => c.className !== '_User')]) {
    const name = graphQLClassName(cls.className);
    const types = typeNamesOf(name);
    const { get, find } = queryNames(name);
    if (types.some((t) => taken.has(t)) || queries.has(get) || queries.has(find)) continue;
    types.forEach((t) => taken.add(t));
    queries.add(get).add(find);
    kept.push(cls);
  }
  return kept.sort((a, b) => a.className.localeCompare(b.className));
}

/**
 * Builds an app's GraphQL schema from its classes as Parse Server 9 names and shapes it
 * (parse-server src/GraphQL/ParseGraphQLSchema.js and its loaders): per class a get and a find
 * query and create, update and delete mutations; `node`, `health`, `viewer`; `signUp`, `logInWith`,
 * `logIn`, `logOut`, `resetPassword`, `confirmResetPassword`, `sendVerificationEmail`;
 * `callCloudCode` when the app has cloud functions (`functionNames`); the schema API (`class`,
 * `classes`, `createClass`…: schemaTypes.ts) and `createFile` (uploads.ts). Resolvers act through
 * the request's data API (GraphQLContext), so every check of REST applies.
 * Classes are taken in name order so that the schema is the same for the same classes.
 *
 * `options.validate` (default false): whether graphql-js checks the schema's rules at its first
 * request. Off in service: the builder makes only valid schemas (test/graphql-schema.test.ts holds it
 * to that with fast-check over class, field and function names, validating each), and the check is
 * about 40% of building the schema of a large app.
 */
export function buildSchema(list: readonly SchemaClass[], functionNames: readonly string[] = [], options: { validate?: boolean } = {}): GraphQLSchema {
  const sorted = withoutCollisions([...list].sort((a, b) => a.className.localeCompare(b.className)));
  const types = new Map<string, ClassTypes>();
  const { nodeInterface, nodeField } = nodeDefinitions<GraphQLContext>(
    async (globalId, ctx, info) => {
      const { type, id } = fromGlobalId(globalId);
      return { className: type, ...(await getObject(ctx, build.classes, type, id, selectedPaths(info))) };
    },
    (object: Source) => types.get(object.className)?.output.name,
  );
  const build: Build = {
    classes: { fields: new Map(sorted.map((c) => [c.className, c.fields])) },
    types,
    node: nodeInterface,
    arrayResult: new GraphQLUnionType({
      name: 'ArrayResult',
      description: 'Use Inline Fragment on Array to get results: https://graphql.org/learn/queries/#inline-fragments',
      types: () => [T.ELEMENT, ...[...types.values()].map((t) => t.output)],
      resolveType: (value: Source) =>
        value.__type === 'Object' && value.className && value.objectId && types.has(value.className) ? types.get(value.className)!.output.name : T.ELEMENT.name,
    }),
  };
  for (const cls of sorted) types.set(cls.className, classTypes(cls.className, cls.fields, build));

  const queries: GraphQLFieldConfigMap<Source, GraphQLContext> = {
    health: { type: new GraphQLNonNull(GraphQLBoolean), description: 'The health query can be used to check if the server is up and running.', resolve: () => true },
    node: nodeField,
  };
  const mutations: GraphQLFieldConfigMap<Source, GraphQLContext> = { createFile: createFileMutation(T.FILE_INFO) };
  const schemaOps = schemaOperations();
  Object.assign(queries, schemaOps.queries);
  Object.assign(mutations, schemaOps.mutations);
  for (const cls of sorted) {
    const { className } = cls;
    const t = types.get(className)!;
    const { get, find } = queryNames(t.name);
    queries[get] = {
      type: new GraphQLNonNull(t.output),
      description: `The ${get} query can be used to get an object of the ${t.name} class by its id.`,
      args: { id: { type: new GraphQLNonNull(GraphQLID) }, options: { type: T.READ_OPTIONS_INPUT } },
      resolve: (_s, args, ctx, info) => getObject(ctx, build.classes, className, objectIdOf(args.id, className), selectedPaths(info)),
    };
    queries[find] = {
      type: new GraphQLNonNull(t.connection),
      description: `The ${find} query can be used to find objects of the ${t.name} class.`,
      args: t.findArgs,
      resolve: (_s, args, ctx, info) => findObjects(ctx, build.classes, className, args as FindArgs, selectedPaths(info)),
    };
    const payload = { [get]: { type: new GraphQLNonNull(t.output) } };
    mutations[`create${t.name}`] = mutationWithClientMutationId({
      name: `Create${t.name}`,
      description: `The create${t.name} mutation can be used to create a new object of the ${t.name} class.`,
      inputFields: { fields: { type: t.create } },
      outputFields: payload,
      mutateAndGetPayload: async (input, ctx: GraphQLContext, info) => {
        const fields = await toParseFields(input.fields ?? {}, className, build.classes.fields, nestedCreate(ctx));
        return { [get]: await createObject(ctx, build.classes, className, fields, payloadPaths(info, get)) };
      },
    });
    mutations[`update${t.name}`] = mutationWithClientMutationId({
      name: `Update${t.name}`,
      description: `The update${t.name} mutation can be used to update an object of the ${t.name} class.`,
      inputFields: { id: { type: new GraphQLNonNull(GraphQLID) }, fields: { type: t.update } },
      outputFields: payload,
      mutateAndGetPayload: async (input, ctx: GraphQLContext, info) => {
        const fields = await toParseFields(input.fields ?? {}, className, build.classes.fields, nestedCreate(ctx));
        return { [get]: await updateObject(ctx, build.classes, className, objectIdOf(input.id, className), fields, payloadPaths(info, get)) };
      },
    });
    mutations[`delete${t.name}`] = mutationWithClientMutationId({
      name: `Delete${t.name}`,
      description: `The delete${t.name} mutation can be used to delete an object of the ${t.name} class.`,
      inputFields: { id: { type: new GraphQLNonNull(GraphQLID) } },
      outputFields: payload,
      mutateAndGetPayload: async (input, ctx: GraphQLContext, info) => ({
        [get]: await deleteObject(ctx, build.classes, className, objectIdOf(input.id, className), payloadPaths(info, get)),
      }),
    });
  }
  const users = types.get('_User');
  if (users) {
    const viewer = new GraphQLObjectType({
      name: 'Viewer',
      description: 'The Viewer object type is used in operations that involve outputting the current user data.',
      fields: { sessionToken: { type: new GraphQLNonNull(GraphQLString) }, user: { type: new GraphQLNonNull(users.output) } },
    });
    const ops = userOperations(viewer, users.create, build);
    queries.viewer = ops.viewer;
    Object.assign(mutations, ops.mutations, userEmailMutations());
  }
  const callCloudCode = cloudCodeMutation(functionNames);
  if (callCloudCode) mutations.callCloudCode = callCloudCode;
  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', description: 'Query is the top level type for queries.', fields: queries }),
    mutation: new GraphQLObjectType({ name: 'Mutation', description: 'Mutation is the top level type for mutations.', fields: mutations }),
    types: [T.PARSE_OBJECT, T.ELEMENT, build.arrayResult, ...SCHEMA_FIELD_TYPES, ...[...types.values()].map((t) => t.output)],
    assumeValid: !options.validate,
  });
}


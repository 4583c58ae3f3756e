import type { GraphQLSchema } from 'graphql';
import type { Schema } from '../schema.js';
import { DEFAULT_FIELDS } from '../types.js';
import { buildSchema, type SchemaClass } from './schema.js';

/** Classes every app's GraphQL schema has, as Parse Server creates them when it starts (users and roles). */
const ALWAYS = ['_User', '_Role'];

/** The built schema of each app's data schema, and the schema generation and cloud function names it was built from. */
const built = new WeakMap<Schema, { generation: number; functions: string; schema: GraphQLSchema }>();

/**
 * The GraphQL schema of an app, built from its classes on first use and again whenever its schema
 * changes (a class or field added or removed: `Schema.generation`), so a client sees a new class at once.
 * `_User` and `_Role` are there before their first object, as on Parse Server. It is built again
 * too when the app's cloud functions change (a deploy, a webhook), which `callCloudCode` names
 * (parse-server src/GraphQL/ParseGraphQLSchema.js compares its function names the same way).
 * @param functionNames the app's cloud function names (CloudRegistry.functions).
 */
export function appGraphQLSchema(schema: Schema, functionNames: readonly string[] = []): GraphQLSchema {
  const generation = schema.generation();
  const functions = JSON.stringify(functionNames);
  const cached = built.get(schema);
  if (cached && cached.generation === generation && cached.functions === functions) return cached.schema;
  const classes: SchemaClass[] = schema.all().map((cls) => ({ className: cls.className, fields: schema.fields(cls.className) ?? { ...DEFAULT_FIELDS, ...cls.fields } }));
  for (const className of ALWAYS) {
    if (!classes.some((c) => c.className === className)) classes.push({ className, fields: { ...DEFAULT_FIELDS, ...schema.blank(className).fields } });
  }
  const graphQLSchema = buildSchema(classes, functionNames);
  built.set(schema, { generation, functions, schema: graphQLSchema });
  return graphQLSchema;
}

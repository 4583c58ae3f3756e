import {
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
} from 'graphql';
import { mutationWithClientMutationId } from 'graphql-relay';
import { ParseCode } from '../errors.js';
import type { FieldType } from '../types.js';
import { parseError, type GraphQLContext } from './context.js';

/**
 * Parse's GraphQL schema API: the `class` and `classes` queries and the `createClass`,
 * `updateClass` and `deleteClass` mutations, under the names and shapes of parse-server
 * src/GraphQL/loaders/schemaTypes.js, schemaQueries.js and schemaMutations.js. They act through
 * the data API's `/schemas` routes (src/data/rest/routes/schemas.ts), so their checks are REST's;
 * the app's GraphQL schema follows a change at its next request (appSchema.ts: `Schema.generation`).
 */

/** A field of a class as the schema API shows it: its name, Parse type and target class. */
export interface SchemaFieldValue {
  name: string;
  type: string;
  targetClassName?: string;
}

/** A class as the schema API shows it. */
export interface ClassValue {
  name: string;
  schemaFields: SchemaFieldValue[];
}

const NAME = { description: 'This is the field name.', type: new GraphQLNonNull(GraphQLString) };
const TARGET = { description: 'This is the name of the target class for the field.', type: new GraphQLNonNull(GraphQLString) };

/**
 * The Parse types the schema API knows, each with the word Parse uses in its type names
 * (`SchemaGeoPointField`, `addGeoPoint`) and in its `add…` input (`addStrings`). `GeoPoint` is
 * one field (a class holds at most one), `ACL` is shown but never added.
 */
const KINDS = [
  { type: 'String', add: 'addStrings' },
  { type: 'Number', add: 'addNumbers' },
  { type: 'Boolean', add: 'addBooleans' },
  { type: 'Array', add: 'addArrays' },
  { type: 'Object', add: 'addObjects' },
  { type: 'Date', add: 'addDates' },
  { type: 'File', add: 'addFiles' },
  { type: 'GeoPoint', add: 'addGeoPoint', single: true },
  { type: 'Polygon', add: 'addPolygons' },
  { type: 'Bytes', add: 'addBytes' },
  { type: 'Pointer', add: 'addPointers', target: true },
  { type: 'Relation', add: 'addRelations', target: true },
] as const;

const SCHEMA_FIELD: GraphQLInterfaceType = new GraphQLInterfaceType({
  name: 'SchemaField',
  description: 'The SchemaField interface type is used as a base type for the different supported fields of an object class schema.',
  fields: { name: NAME },
  resolveType: (value: SchemaFieldValue) => OUTPUTS.get(value.type)?.name,
});

const OUTPUTS = new Map<string, GraphQLObjectType>(
  [...KINDS.map((k) => ({ type: k.type, target: 'target' in k })), { type: 'ACL', target: false }].map(({ type, target }) => [
    type,
    new GraphQLObjectType({
      name: `Schema${type}Field`,
      description: `The Schema${type}Field is used to return information of a ${type} field.`,
      interfaces: [SCHEMA_FIELD],
      fields: target ? { name: NAME, targetClassName: TARGET } : { name: NAME },
    }),
  ]),
);

/** The input of one added field: `Schema<Type>FieldInput`, and Parse's `PointerFieldInput`/`RelationFieldInput` for the two with a target. */
const fieldInput = (type: string, target: boolean) =>
  new GraphQLInputObjectType({
    name: target ? `${type}FieldInput` : `Schema${type}FieldInput`,
    description: `The ${target ? `${type}FieldInput` : `Schema${type}FieldInput`} is used to specify a field of type ${type.toLowerCase()} for an object class schema.`,
    fields: target ? { name: NAME, targetClassName: TARGET } : { name: NAME },
  });

const SCHEMA_FIELD_INPUT = new GraphQLInputObjectType({
  name: 'SchemaFieldInput',
  description: 'The SchemaFieldInput is used to specify a field of an object class schema.',
  fields: { name: NAME },
});

const SCHEMA_FIELDS_INPUT = new GraphQLInputObjectType({
  name: 'SchemaFieldsInput',
  description: 'The SchemaFieldsInput type is used to specify the fields to add to and remove from an object class schema.',
  fields: () => {
    const map: GraphQLInputFieldConfigMap = {};
    for (const kind of KINDS) {
      const input = fieldInput(kind.type, 'target' in kind);
      map[kind.add] = 'single' in kind ? { type: input } : { type: new GraphQLList(new GraphQLNonNull(input)) };
    }
    map.remove = { description: 'These are the fields to be removed from the class schema.', type: new GraphQLList(new GraphQLNonNull(SCHEMA_FIELD_INPUT)) };
    return map;
  },
});

const CLASS_NAME = { description: 'This is the name of the object class.', type: new GraphQLNonNull(GraphQLString) };

export const CLASS = new GraphQLObjectType({
  name: 'Class',
  description: 'The Class type is used to return the information about an object class.',
  fields: {
    name: CLASS_NAME,
    schemaFields: { description: "These are the schema's fields of the object class.", type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(SCHEMA_FIELD))) },
  },
});

/** The object types of the `SchemaField` interface, which a schema must list (nothing else refers to them). */
export const SCHEMA_FIELD_TYPES: GraphQLObjectType[] = [...OUTPUTS.values()];

/** Every type name the schema API brings into a schema (schema.ts keeps classes from taking them). */
export const SCHEMA_TYPE_NAMES: string[] = [
  'Class', 'SchemaField', 'SchemaFieldInput', 'SchemaFieldsInput', ...SCHEMA_FIELD_TYPES.map((t) => t.name),
  ...KINDS.map((k) => ('target' in k ? `${k.type}FieldInput` : `Schema${k.type}FieldInput`)),
  ...['Create', 'Update', 'Delete'].flatMap((op) => [`${op}ClassInput`, `${op}ClassPayload`]),
];

type Named = { name: string; targetClassName?: string };
/** A `SchemaFieldsInput` value. */
export type SchemaFieldsInput = Partial<Record<(typeof KINDS)[number]['add'], Named[] | Named | null>> & { remove?: { name: string }[] | null };

/**
 * A `SchemaFieldsInput` as the `fields` of a `/schemas` body, by Parse Server's rules
 * (parse-server src/GraphQL/transformers/schemaFields.js, `transformToParse`): each added field
 * with its type (and `targetClass`), a field also named in `remove` is not added, and `remove`
 * deletes the fields `existing` has (`{__op: 'Delete'}`), ignoring others; on a new class
 * (`existing` undefined) `remove` is ignored.
 * @throws GraphQLError 105 "Duplicated field name: <name>" for a field added twice or already in `existing`.
 */
export function toParseSchemaFields(input: SchemaFieldsInput | null | undefined, existing?: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!input) return out;
  const removed = new Set((input.remove ?? []).map((f) => f.name));
  for (const kind of KINDS) {
    const given = input[kind.add];
    if (given === undefined || given === null) continue;
    for (const field of Array.isArray(given) ? given : [given]) {
      if (removed.has(field.name)) continue;
      if (Object.hasOwn(out, field.name) || (existing && Object.hasOwn(existing, field.name))) {
        throw parseError(ParseCode.INVALID_KEY_NAME, `Duplicated field name: ${field.name}`);
      }
      out[field.name] = 'target' in kind ? { type: kind.type, targetClass: field.targetClassName } : { type: kind.type };
    }
  }
  if (existing) for (const name of removed) if (Object.hasOwn(existing, name)) out[name] = { __op: 'Delete' };
  return out;
}

/** A `/schemas` class (`{className, fields}`) as the schema API shows it. */
export function toClassValue(cls: { className: string; fields: Readonly<Record<string, FieldType>> }): ClassValue {
  return {
    name: cls.className,
    schemaFields: Object.entries(cls.fields).map(([name, field]) => ({ name, type: field.type, ...(field.targetClass ? { targetClassName: field.targetClass } : {}) })),
  };
}

/** Parse Server checks the master key before anything else (parse-server src/GraphQL/parseGraphQLUtils.js, `enforceMasterKeyAccess`). */
function requireMaster(ctx: GraphQLContext): void {
  if (!ctx.master) throw parseError(ParseCode.OPERATION_FORBIDDEN, 'unauthorized: master key is required');
}

const schemaPath = (name: string) => `/schemas/${encodeURIComponent(name)}`;
const readClass = async (ctx: GraphQLContext, name: string) => (await ctx.call({ method: 'GET', path: schemaPath(name) })) as { className: string; fields: Record<string, FieldType> };

type Source = Record<string, unknown>;

/**
 * The schema API's queries and mutations, master key only (119 otherwise, as Parse Server).
 * A class that does not exist is 103; a class that is not empty cannot be deleted (255); the other
 * errors are `/schemas`'s.
 */
export function schemaOperations(): { queries: GraphQLFieldConfigMap<Source, GraphQLContext>; mutations: Record<string, GraphQLFieldConfig<Source, GraphQLContext>> } {
  const classQuery: GraphQLFieldConfig<Source, GraphQLContext> = {
    description: 'The class query can be used to retrieve an existing object class.',
    type: new GraphQLNonNull(CLASS),
    args: { name: CLASS_NAME },
    resolve: async (_s, args, ctx) => {
      requireMaster(ctx);
      return toClassValue(await readClass(ctx, args.name));
    },
  };
  const classesQuery: GraphQLFieldConfig<Source, GraphQLContext> = {
    description: 'The classes query can be used to retrieve the existing object classes.',
    type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(CLASS))),
    resolve: async (_s, _a, ctx) => {
      requireMaster(ctx);
      const { results } = (await ctx.call({ method: 'GET', path: '/schemas' })) as { results: { className: string; fields: Record<string, FieldType> }[] };
      return results.map(toClassValue);
    },
  };
  const schemaFields = { description: "These are the schema's fields of the object class.", type: SCHEMA_FIELDS_INPUT };
  const createClass = mutationWithClientMutationId({
    name: 'CreateClass',
    description: 'The createClass mutation can be used to create the schema for a new object class.',
    inputFields: { name: CLASS_NAME, schemaFields },
    outputFields: { class: { description: 'This is the created class.', type: new GraphQLNonNull(CLASS) } },
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      requireMaster(ctx);
      const fields = toParseSchemaFields(input.schemaFields);
      return { class: toClassValue(await ctx.call({ method: 'POST', path: schemaPath(input.name), body: { className: input.name, fields } })) };
    },
  });
  const updateClass = mutationWithClientMutationId({
    name: 'UpdateClass',
    description: 'The updateClass mutation can be used to update the schema for an existing object class.',
    inputFields: { name: CLASS_NAME, schemaFields },
    outputFields: { class: { description: 'This is the updated class.', type: new GraphQLNonNull(CLASS) } },
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      requireMaster(ctx);
      const existing = await readClass(ctx, input.name);
      const fields = toParseSchemaFields(input.schemaFields, existing.fields);
      return { class: toClassValue(await ctx.call({ method: 'PUT', path: schemaPath(input.name), body: { className: input.name, fields } })) };
    },
  });
  const deleteClass = mutationWithClientMutationId({
    name: 'DeleteClass',
    description: 'The deleteClass mutation can be used to delete an existing object class.',
    inputFields: { name: CLASS_NAME },
    outputFields: { class: { description: 'This is the deleted class.', type: new GraphQLNonNull(CLASS) } },
    mutateAndGetPayload: async (input, ctx: GraphQLContext) => {
      requireMaster(ctx);
      const existing = await readClass(ctx, input.name);
      await ctx.call({ method: 'DELETE', path: schemaPath(input.name) });
      return { class: toClassValue(existing) };
    },
  });
  return { queries: { class: classQuery, classes: classesQuery }, mutations: { createClass, updateClass, deleteClass } };
}

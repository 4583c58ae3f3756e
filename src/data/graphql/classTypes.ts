import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLInterfaceType,
  type GraphQLOutputType,
  type GraphQLUnionType,
} from 'graphql';
import { connectionArgs, connectionDefinitions, globalIdField } from 'graphql-relay';
import type { FieldType } from '../types.js';
import type { GraphQLContext } from './context.js';
import { findObjects, type FindArgs, type SchemaClasses } from './objects.js';
import { below, selectedPaths } from './selection.js';
import * as T from './types.js';

/** The GraphQL types made for one Parse class (parse-server src/GraphQL/loaders/parseClassTypes.js). */
export interface ClassTypes {
  /** `GameScore` for `GameScore`, `User` for `_User`. */
  name: string;
  output: GraphQLObjectType;
  connection: GraphQLObjectType;
  findArgs: GraphQLFieldConfigArgumentMap;
  create: GraphQLInputObjectType;
  update: GraphQLInputObjectType;
  pointer: GraphQLInputObjectType;
  relation: GraphQLInputObjectType;
  where: GraphQLInputObjectType;
  relationWhere: GraphQLInputObjectType;
}

/** What building one class's types needs of the whole schema. */
export interface Build {
  classes: SchemaClasses;
  types: Map<string, ClassTypes>;
  node: GraphQLInterfaceType;
  arrayResult: GraphQLUnionType;
}

/** Parse's GraphQL name of a class: without a leading `_`, first letter upper case (`_User` → `User`). */
export function graphQLClassName(className: string): string {
  const bare = className.startsWith('_') ? className.slice(1) : className;
  return bare.charAt(0).toUpperCase() + bare.slice(1);
}

/** The fields of the `ParseObject` interface, which are not per-class inputs. */
const OBJECT_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

function inputType(type: FieldType, build: Build): GraphQLInputType | undefined {
  switch (type.type) {
    case 'String':
      return GraphQLString;
    case 'Number':
      return GraphQLFloat;
    case 'Boolean':
      return GraphQLBoolean;
    case 'Array':
      return new GraphQLList(T.ANY);
    case 'Object':
      return T.OBJECT;
    case 'Date':
      return T.DATE;
    case 'Pointer':
      return build.types.get(type.targetClass!)?.pointer ?? T.OBJECT;
    case 'Relation':
      return build.types.get(type.targetClass!)?.relation ?? T.OBJECT;
    case 'File':
      return T.FILE_INPUT;
    case 'GeoPoint':
      return T.GEO_POINT_INPUT;
    case 'Polygon':
      return T.POLYGON_INPUT;
    case 'Bytes':
      return T.BYTES;
    default:
      return undefined;
  }
}

function outputType(type: FieldType, build: Build): GraphQLOutputType | undefined {
  switch (type.type) {
    case 'String':
      return GraphQLString;
    case 'Number':
      return GraphQLFloat;
    case 'Boolean':
      return GraphQLBoolean;
    case 'Array':
      return new GraphQLList(build.arrayResult);
    case 'Object':
      return T.OBJECT;
    case 'Date':
      return T.DATE;
    case 'Pointer':
      return build.types.get(type.targetClass!)?.output ?? T.OBJECT;
    case 'Relation':
      return new GraphQLNonNull(build.types.get(type.targetClass!)?.connection ?? T.OBJECT);
    case 'File':
      return T.FILE_INFO;
    case 'GeoPoint':
      return T.GEO_POINT;
    case 'Polygon':
      return T.POLYGON;
    case 'Bytes':
      return T.BYTES;
    default:
      return undefined;
  }
}

function whereType(field: string, type: FieldType, build: Build): GraphQLInputType | undefined {
  if (field === 'id' || field === 'objectId') return T.ID_WHERE_INPUT;
  switch (type.type) {
    case 'String':
      return T.STRING_WHERE_INPUT;
    case 'Number':
      return T.NUMBER_WHERE_INPUT;
    case 'Boolean':
      return T.BOOLEAN_WHERE_INPUT;
    case 'Array':
      return T.ARRAY_WHERE_INPUT;
    case 'Object':
    case 'ACL':
      return T.OBJECT_WHERE_INPUT;
    case 'Date':
      return T.DATE_WHERE_INPUT;
    case 'Pointer':
    case 'Relation':
      return build.types.get(type.targetClass!)?.relationWhere ?? T.OBJECT;
    case 'File':
      return T.FILE_WHERE_INPUT;
    case 'GeoPoint':
      return T.GEO_POINT_WHERE_INPUT;
    case 'Polygon':
      return T.POLYGON_WHERE_INPUT;
    case 'Bytes':
      return T.BYTES_WHERE_INPUT;
    default:
      return undefined;
  }
}

/** Source objects are the data API's JSON objects. */
type Source = Record<string, any>;

/**
 * Makes one class's types: the output object type (`GameScore`, implementing `ParseObject` and
 * `Node`, with the Relay `id`), its connection, the create, update, pointer and relation inputs,
 * the where-inputs and the order enum, with the class's fields in alphabetical order as Parse
 * Server sorts them. Field types refer to other classes' types lazily, so every class's entry is
 * made before any type is used.
 */
export function classTypes(className: string, fields: Readonly<Record<string, FieldType>>, build: Build): ClassTypes {
  const name = graphQLClassName(className);
  const all = Object.keys(fields).sort();
  // A field called `id` would hide the Relay global id: Parse Server's `id` always is the global id.
  const custom = all.filter((f) => !OBJECT_FIELDS.has(f) && f !== 'id');
  const outputs = className === '_User' ? custom.filter((f) => f !== 'password') : custom;

  const inputFields = (required: boolean) => (): GraphQLInputFieldConfigMap => {
    const map: GraphQLInputFieldConfigMap = { ACL: { type: T.ACL_INPUT } };
    for (const f of custom) {
      const type = inputType(fields[f]!, build);
      if (type) map[f] = { description: `This is the object ${f}.`, type: required && fields[f]!.required ? new GraphQLNonNull(type) : type };
    }
    return map;
  };
  const create = new GraphQLInputObjectType({
    name: `Create${name}FieldsInput`,
    description: `The Create${name}FieldsInput input type is used in operations that involve creation of objects in the ${name} class.`,
    fields: inputFields(true),
  });
  const update = new GraphQLInputObjectType({
    name: `Update${name}FieldsInput`,
    description: `The Update${name}FieldsInput input type is used in operations that involve creation of objects in the ${name} class.`,
    fields: inputFields(false),
  });
  const pointer = new GraphQLInputObjectType({
    name: `${name}PointerInput`,
    description: `Allow to link OR add and link an object of the ${name} class.`,
    fields: () => ({ link: { type: GraphQLID }, createAndLink: { type: create } }),
  });
  const relation = new GraphQLInputObjectType({
    name: `${name}RelationInput`,
    description: `Allow to add, remove, createAndAdd objects of the ${name} class into a relation field.`,
    fields: () => ({
      add: { type: new GraphQLList(new GraphQLNonNull(GraphQLID)) },
      remove: { type: new GraphQLList(new GraphQLNonNull(GraphQLID)) },
      createAndAdd: { type: new GraphQLList(new GraphQLNonNull(create)) },
    }),
  });
  const where: GraphQLInputObjectType = new GraphQLInputObjectType({
    name: `${name}WhereInput`,
    description: `The ${name}WhereInput input type is used in operations that involve filtering objects of ${name} class.`,
    fields: () => {
      const map: GraphQLInputFieldConfigMap = {};
      for (const f of [...all.filter((f) => f !== 'id'), 'id']) {
        if (f === 'OR' || f === 'AND' || f === 'NOR') continue;
        const type = whereType(f, fields[f === 'id' ? 'objectId' : f]!, build);
        if (type) map[f] = { description: `This is the object ${f}.`, type };
      }
      const list = new GraphQLList(new GraphQLNonNull(where));
      return { ...map, OR: { type: list }, AND: { type: list }, NOR: { type: list } };
    },
  });
  const relationWhere = new GraphQLInputObjectType({
    name: `${name}RelationWhereInput`,
    fields: () => ({ have: { type: where }, haveNot: { type: where }, exists: { type: GraphQLBoolean } }),
  });
  const orderValues: Record<string, { value: string }> = {};
  for (const f of [...all, 'id']) {
    const value = f === 'id' ? 'objectId' : f;
    orderValues[`${f}_ASC`] = { value };
    orderValues[`${f}_DESC`] = { value: `-${value}` };
  }
  const order = new GraphQLEnumType({ name: `${name}Order`, description: `The ${name}Order input type is used when sorting objects of the ${name} class.`, values: orderValues });
  const findArgs: GraphQLFieldConfigArgumentMap = {
    where: { type: where, description: 'These are the conditions that the objects need to match in order to be found.' },
    order: { type: new GraphQLList(new GraphQLNonNull(order)), description: 'The fields to be used when sorting the data fetched.' },
    skip: T.SKIP_ARG,
    ...connectionArgs,
    options: { type: T.READ_OPTIONS_INPUT },
  };

  const output: GraphQLObjectType = new GraphQLObjectType<Source, GraphQLContext>({
    name,
    description: `The ${name} object type is used in operations that involve outputting objects of ${name} class.`,
    interfaces: () => [T.PARSE_OBJECT, build.node],
    fields: () => {
      const map: GraphQLFieldConfigMap<Source, GraphQLContext> = {
        id: globalIdField(className, (object: Source) => object.objectId),
        ...T.PARSE_OBJECT_FIELDS,
        ...(className === '_User' ? { authDataResponse: { type: T.OBJECT } } : {}),
      };
      for (const f of outputs) {
        const field = outputField(className, f, fields[f]!, build);
        if (field) map[f] = field;
      }
      return map;
    },
  });
  const { connectionType } = connectionDefinitions({ name, nodeType: output, connectionFields: { count: T.COUNT_FIELD } });
  return { name, output, connection: connectionType, findArgs, create, update, pointer, relation, where, relationWhere };
}

function outputField(className: string, field: string, type: FieldType, build: Build): GraphQLFieldConfig<Source, GraphQLContext> | undefined {
  const graphQLType = outputType(type, build);
  if (!graphQLType) return undefined;
  const nonNull = (t: GraphQLOutputType) => (type.required && !(t instanceof GraphQLNonNull) ? new GraphQLNonNull(t) : t);
  switch (type.type) {
    case 'Relation': {
      const target = build.types.get(type.targetClass!);
      return {
        type: graphQLType,
        args: target?.findArgs,
        resolve: (source, args, ctx, info) =>
          findObjects(ctx, build.classes, type.targetClass!, args as FindArgs, selectedPaths(info), {
            $relatedTo: { object: { __type: 'Pointer', className, objectId: source.objectId }, key: field },
          }),
      };
    }
    case 'Polygon':
      return {
        type: nonNull(graphQLType),
        resolve: (source) => source[field]?.coordinates?.map(([latitude, longitude]: number[]) => ({ latitude, longitude })) ?? null,
      };
    case 'Array':
      return {
        type: nonNull(graphQLType),
        description: 'Use Inline Fragment on Array to get results: https://graphql.org/learn/queries/#inline-fragments',
        // Objects of a class (included pointers) show as their type; anything else as an Element.
        resolve: (source) =>
          Array.isArray(source[field])
            ? source[field].map((item: any) => (item && typeof item === 'object' && item.__type === 'Object' && item.className && item.objectId ? item : { value: item }))
            : null,
      };
    default:
      return { type: nonNull(graphQLType), description: `This is the object ${field}.` };
  }
}

/** The selected paths below a mutation payload's object field (`gameScore.`). */
export const payloadPaths = (info: Parameters<typeof selectedPaths>[0], field: string) => below(selectedPaths(info), `${field}.`);

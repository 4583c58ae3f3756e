import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLError,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
  Kind,
  valueFromASTUntyped,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type ValueNode,
} from 'graphql';
import { toGlobalId } from 'graphql-relay';
import { UPLOAD } from './uploads.js';

/**
 * The types every app's GraphQL schema shares, under the names and shapes Parse Server 9 gives them
 * (parse-server src/GraphQL/loaders/defaultGraphQLTypes.js): the `Any`, `Object`, `Date`, `Bytes`
 * and `File` scalars, ACLs, geo points, files, the where-inputs per field type and the read options.
 * They hold no app state, so one set serves every app's schema.
 */

const invalid = (value: unknown, type: string) => new GraphQLError(`${typeof value === 'object' ? JSON.stringify(value) : String(value)} is not a valid ${type}`);

const isPlain = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Any JSON value, as given (array elements, where values of arrays). */
export const ANY = new GraphQLScalarType({
  name: 'Any',
  description: 'The Any scalar type is used in operations and types that involve any type of value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

/** A JSON object (Object fields, `authData`, where-values of Object fields). */
export const OBJECT = new GraphQLScalarType({
  name: 'Object',
  description: 'The Object scalar type is used in operations and types that involve objects.',
  serialize(value) {
    if (typeof value === 'object' && value !== null) return value;
    throw invalid(value, 'Object');
  },
  parseValue(value) {
    if (typeof value === 'object' && value !== null) return value;
    throw invalid(value, 'Object');
  },
  parseLiteral(ast, variables) {
    if (ast.kind === Kind.OBJECT) return valueFromASTUntyped(ast, variables);
    throw invalid(ast.kind, 'Object');
  },
});

/** An ISO 8601 date text, or Parse's `{__type: 'Date', iso}`; null when it is neither. */
function isoOf(value: unknown): string | undefined {
  const text = value instanceof Date ? value.toISOString() : isPlain(value) && value.__type === 'Date' ? value.iso : value;
  if (typeof text !== 'string' || Number.isNaN(new Date(text).getTime())) return undefined;
  return text;
}

/** Dates: ISO texts out; in, an ISO text or `{__type: 'Date', iso}`, made Parse's date form. */
export const DATE = new GraphQLScalarType({
  name: 'Date',
  description: 'The Date scalar type is used in operations and types that involve dates.',
  serialize(value) {
    const iso = typeof value === 'string' ? value : isoOf(value);
    if (iso === undefined) throw invalid(value, 'Date');
    return iso;
  },
  parseValue(value) {
    const iso = isoOf(value);
    if (iso === undefined) throw invalid(value, 'Date');
    return { __type: 'Date', iso: new Date(iso).toISOString() };
  },
  parseLiteral(ast, variables) {
    const value = ast.kind === Kind.STRING || ast.kind === Kind.OBJECT ? valueFromASTUntyped(ast, variables) : undefined;
    const iso = isoOf(value);
    if (iso === undefined) throw invalid(ast.kind, 'Date');
    return { __type: 'Date', iso: new Date(iso).toISOString() };
  },
});

/** Bytes: base64 text out; in, base64 text or `{__type: 'Bytes', base64}`. */
export const BYTES = new GraphQLScalarType({
  name: 'Bytes',
  description: 'The Bytes scalar type is used in operations and types that involve base 64 binary data.',
  serialize(value) {
    if (typeof value === 'string') return value;
    if (isPlain(value) && value.__type === 'Bytes' && typeof value.base64 === 'string') return value.base64;
    throw invalid(value, 'Bytes');
  },
  parseValue(value) {
    if (typeof value === 'string') return { __type: 'Bytes', base64: value };
    if (isPlain(value) && value.__type === 'Bytes' && typeof value.base64 === 'string') return value;
    throw invalid(value, 'Bytes');
  },
  parseLiteral(ast, variables) {
    const value: unknown = valueFromASTUntyped(ast as ValueNode, variables);
    if (typeof value === 'string') return { __type: 'Bytes', base64: value };
    if (isPlain(value) && value.__type === 'Bytes' && typeof value.base64 === 'string') return value;
    throw invalid(ast.kind, 'Bytes');
  },
});

const fileValue = (value: unknown) => {
  if (typeof value === 'string') return { __type: 'File', name: value };
  if (isPlain(value) && value.__type === 'File' && typeof value.name === 'string' && (value.url === undefined || typeof value.url === 'string')) return value;
  throw invalid(value, 'File');
};

/** A stored file by name (where-values and `FileInput.file`). */
export const FILE = new GraphQLScalarType({
  name: 'File',
  description: 'The File scalar type is used in operations and types that involve files.',
  serialize(value) {
    if (typeof value === 'string') return value;
    if (isPlain(value) && value.__type === 'File' && typeof value.name === 'string') return value.name;
    throw invalid(value, 'File');
  },
  parseValue: fileValue,
  parseLiteral: (ast, variables) => fileValue(valueFromASTUntyped(ast, variables)),
});

export const FILE_INFO = new GraphQLObjectType({
  name: 'FileInfo',
  description: 'The FileInfo object type is used to return the information about files.',
  fields: { name: { type: new GraphQLNonNull(GraphQLString) }, url: { type: new GraphQLNonNull(GraphQLString) } },
});

/** A File field's input: a stored file (`file`), or a new one sent with a multipart request (`upload`: uploads.ts). */
export const FILE_INPUT = new GraphQLInputObjectType({
  name: 'FileInput',
  description: 'If this field is set to null the file will be unlinked (the file will not be deleted on cloud storage).',
  fields: {
    file: { type: FILE, description: 'A File Scalar can be an url or a FileInfo object.' },
    upload: { type: UPLOAD, description: 'Use this field if you want to create a new file.' },
  },
});

const GEO_POINT_FIELDS = { latitude: { type: new GraphQLNonNull(GraphQLFloat) }, longitude: { type: new GraphQLNonNull(GraphQLFloat) } };
export const GEO_POINT_INPUT = new GraphQLInputObjectType({ name: 'GeoPointInput', fields: GEO_POINT_FIELDS });
export const GEO_POINT = new GraphQLObjectType({ name: 'GeoPoint', fields: GEO_POINT_FIELDS });
export const POLYGON_INPUT = new GraphQLList(new GraphQLNonNull(GEO_POINT_INPUT));
export const POLYGON = new GraphQLList(new GraphQLNonNull(GEO_POINT));

const READ_WRITE_INPUT = { read: { type: new GraphQLNonNull(GraphQLBoolean) }, write: { type: new GraphQLNonNull(GraphQLBoolean) } };
export const ACL_INPUT = new GraphQLInputObjectType({
  name: 'ACLInput',
  description: 'Allow to manage access rights. If not provided object will be publicly readable and writable',
  fields: {
    users: { type: new GraphQLList(new GraphQLNonNull(new GraphQLInputObjectType({ name: 'UserACLInput', fields: { userId: { type: new GraphQLNonNull(GraphQLID) }, ...READ_WRITE_INPUT } }))) },
    roles: { type: new GraphQLList(new GraphQLNonNull(new GraphQLInputObjectType({ name: 'RoleACLInput', fields: { roleName: { type: new GraphQLNonNull(GraphQLString) }, ...READ_WRITE_INPUT } }))) },
    public: { type: new GraphQLInputObjectType({ name: 'PublicACLInput', fields: READ_WRITE_INPUT }) },
  },
});

type AclRules = Record<string, { read?: boolean; write?: boolean }>;
const READ_WRITE = { read: { type: new GraphQLNonNull(GraphQLBoolean) }, write: { type: new GraphQLNonNull(GraphQLBoolean) } };
const rule = (r: { read?: boolean; write?: boolean } | undefined) => ({ read: Boolean(r?.read), write: Boolean(r?.write) });

/** An object's ACL as lists of user and role rules and the public rule; user ids are global ids of `_User`. */
export const ACL = new GraphQLObjectType<AclRules>({
  name: 'ACL',
  description: 'Current access control list of the current object.',
  fields: {
    users: {
      type: new GraphQLList(new GraphQLNonNull(new GraphQLObjectType({ name: 'UserACL', fields: { userId: { type: new GraphQLNonNull(GraphQLID) }, ...READ_WRITE } }))),
      resolve(acl) {
        const users = Object.keys(acl).filter((k) => k !== '*' && !k.startsWith('role:')).map((id) => ({ userId: toGlobalId('_User', id), ...rule(acl[id]) }));
        return users.length ? users : null;
      },
    },
    roles: {
      type: new GraphQLList(new GraphQLNonNull(new GraphQLObjectType({ name: 'RoleACL', fields: { roleName: { type: new GraphQLNonNull(GraphQLID) }, ...READ_WRITE } }))),
      resolve(acl) {
        const roles = Object.keys(acl).filter((k) => k.startsWith('role:')).map((k) => ({ roleName: k.slice('role:'.length), ...rule(acl[k]) }));
        return roles.length ? roles : null;
      },
    },
    public: {
      type: new GraphQLObjectType({ name: 'PublicACL', fields: { read: { type: GraphQLBoolean }, write: { type: GraphQLBoolean } } }),
      resolve: (acl) => (acl['*'] ? rule(acl['*']) : null),
    },
  },
});

/** The fields of every class (the `ParseObject` interface); an object stored without an ACL shows Parse's default, public read and write. */
export const PARSE_OBJECT_FIELDS: GraphQLFieldConfigMap<Record<string, unknown>, unknown> = {
  objectId: { type: new GraphQLNonNull(GraphQLID), description: 'This is the object id. You can use either the global or the object id.' },
  createdAt: { type: new GraphQLNonNull(DATE), description: 'This is the date in which the object was created.' },
  updatedAt: { type: new GraphQLNonNull(DATE), description: 'This is the date in which the object was las updated.' },
  ACL: { type: new GraphQLNonNull(ACL), resolve: (object) => object.ACL ?? { '*': { read: true, write: true } } },
};

export const PARSE_OBJECT = new GraphQLInterfaceType({ name: 'ParseObject', fields: PARSE_OBJECT_FIELDS });

export const READ_PREFERENCE = new GraphQLEnumType({
  name: 'ReadPreference',
  values: { PRIMARY: {}, PRIMARY_PREFERRED: {}, SECONDARY: {}, SECONDARY_PREFERRED: {}, NEAREST: {} },
});
/** Accepted for Parse's clients; one database has no replicas to prefer, so it changes nothing. */
export const READ_OPTIONS_INPUT = new GraphQLInputObjectType({
  name: 'ReadOptionsInput',
  fields: { readPreference: { type: READ_PREFERENCE }, includeReadPreference: { type: READ_PREFERENCE }, subqueryReadPreference: { type: READ_PREFERENCE } },
});

const SUBQUERY_INPUT = new GraphQLInputObjectType({
  name: 'SubqueryInput',
  fields: { className: { type: new GraphQLNonNull(GraphQLString) }, where: { type: new GraphQLNonNull(OBJECT) } },
});
const SELECT_INPUT = new GraphQLInputObjectType({
  name: 'SelectInput',
  fields: { query: { type: new GraphQLNonNull(SUBQUERY_INPUT) }, key: { type: new GraphQLNonNull(GraphQLString) } },
});

/** The comparison operators of a where-input whose values are of `type`. */
const comparisons = (type: GraphQLInputType): GraphQLInputFieldConfigMap => ({
  equalTo: { type },
  notEqualTo: { type },
  lessThan: { type },
  lessThanOrEqualTo: { type },
  greaterThan: { type },
  greaterThanOrEqualTo: { type },
  in: { type: new GraphQLList(type) },
  notIn: { type: new GraphQLList(type) },
  exists: { type: GraphQLBoolean },
});
const selects: GraphQLInputFieldConfigMap = { inQueryKey: { type: SELECT_INPUT }, notInQueryKey: { type: SELECT_INPUT } };
const regex: GraphQLInputFieldConfigMap = { matchesRegex: { type: GraphQLString }, options: { type: GraphQLString } };

const TEXT_INPUT = new GraphQLInputObjectType({
  name: 'TextInput',
  fields: {
    search: {
      type: new GraphQLNonNull(
        new GraphQLInputObjectType({
          name: 'SearchInput',
          fields: { term: { type: new GraphQLNonNull(GraphQLString) }, language: { type: GraphQLString }, caseSensitive: { type: GraphQLBoolean }, diacriticSensitive: { type: GraphQLBoolean } },
        }),
      ),
    },
  },
});

export const ID_WHERE_INPUT = new GraphQLInputObjectType({ name: 'IdWhereInput', fields: { ...comparisons(GraphQLID), ...selects } });
export const STRING_WHERE_INPUT = new GraphQLInputObjectType({ name: 'StringWhereInput', fields: { ...comparisons(GraphQLString), ...regex, text: { type: TEXT_INPUT }, ...selects } });
export const NUMBER_WHERE_INPUT = new GraphQLInputObjectType({ name: 'NumberWhereInput', fields: { ...comparisons(GraphQLFloat), ...selects } });
export const BOOLEAN_WHERE_INPUT = new GraphQLInputObjectType({
  name: 'BooleanWhereInput',
  fields: { equalTo: { type: GraphQLBoolean }, notEqualTo: { type: GraphQLBoolean }, exists: { type: GraphQLBoolean }, ...selects },
});
export const ARRAY_WHERE_INPUT = new GraphQLInputObjectType({
  name: 'ArrayWhereInput',
  fields: { ...comparisons(ANY), containedBy: { type: new GraphQLList(ANY) }, contains: { type: new GraphQLList(ANY) }, ...selects },
});
const KEY_VALUE_INPUT = new GraphQLInputObjectType({ name: 'KeyValueInput', fields: { key: { type: new GraphQLNonNull(GraphQLString) }, value: { type: new GraphQLNonNull(ANY) } } });
export const OBJECT_WHERE_INPUT = new GraphQLInputObjectType({ name: 'ObjectWhereInput', fields: { ...comparisons(KEY_VALUE_INPUT), ...selects } });
export const DATE_WHERE_INPUT = new GraphQLInputObjectType({ name: 'DateWhereInput', fields: { ...comparisons(DATE), ...selects } });
export const BYTES_WHERE_INPUT = new GraphQLInputObjectType({ name: 'BytesWhereInput', fields: { ...comparisons(BYTES), ...selects } });
export const FILE_WHERE_INPUT = new GraphQLInputObjectType({ name: 'FileWhereInput', fields: { ...comparisons(FILE), ...regex, ...selects } });
const BOX_INPUT = new GraphQLInputObjectType({ name: 'BoxInput', fields: { bottomLeft: { type: new GraphQLNonNull(GEO_POINT_INPUT) }, upperRight: { type: new GraphQLNonNull(GEO_POINT_INPUT) } } });
const CENTER_SPHERE_INPUT = new GraphQLInputObjectType({ name: 'CenterSphereInput', fields: { center: { type: new GraphQLNonNull(GEO_POINT_INPUT) }, distance: { type: new GraphQLNonNull(GraphQLFloat) } } });
export const GEO_POINT_WHERE_INPUT = new GraphQLInputObjectType({
  name: 'GeoPointWhereInput',
  fields: {
    exists: { type: GraphQLBoolean },
    nearSphere: { type: GEO_POINT_INPUT },
    maxDistance: { type: GraphQLFloat },
    maxDistanceInRadians: { type: GraphQLFloat },
    maxDistanceInMiles: { type: GraphQLFloat },
    maxDistanceInKilometers: { type: GraphQLFloat },
    within: { type: new GraphQLInputObjectType({ name: 'WithinInput', fields: { box: { type: new GraphQLNonNull(BOX_INPUT) } } }) },
    geoWithin: { type: new GraphQLInputObjectType({ name: 'GeoWithinInput', fields: { polygon: { type: POLYGON_INPUT }, centerSphere: { type: CENTER_SPHERE_INPUT } } }) },
  },
});
export const POLYGON_WHERE_INPUT = new GraphQLInputObjectType({
  name: 'PolygonWhereInput',
  fields: { exists: { type: GraphQLBoolean }, geoIntersects: { type: new GraphQLInputObjectType({ name: 'GeoIntersectsInput', fields: { point: { type: GEO_POINT_INPUT } } }) } },
});

/** An array element that is not an object of a class: `{value}`. */
export const ELEMENT = new GraphQLObjectType({ name: 'Element', description: "The Element object type is used to return array items' value.", fields: { value: { type: new GraphQLNonNull(ANY) } } });

export const SKIP_ARG = { type: GraphQLInt };
export const COUNT_FIELD = { type: new GraphQLNonNull(GraphQLInt), description: 'This is the total matched objecs count that is returned when the count flag is set.' };

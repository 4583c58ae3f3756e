import { packageVersion } from '../../../version.js';
import type { StoredClass } from '../../storage/adapter.js';
import { DEFAULT_FIELDS, type FieldType } from '../../types.js';
import type { DataRouter } from '../router.js';
import { ok, type DataRequest } from '../types.js';
import { CLASS_ALIASES } from './classes.js';

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const typed = (type: string, properties: Json, required: string[]): Json => ({
  type: 'object',
  required: ['__type', ...required],
  properties: { __type: { const: type }, ...properties },
});

/** Parse's JSON forms of typed values (REST guide, "Data Types"), named `Parse.<Type>` so no class collides. */
const VALUE_SCHEMAS: Record<string, Json> = {
  'Parse.Date': typed('Date', { iso: { type: 'string', format: 'date-time' } }, ['iso']),
  'Parse.Pointer': typed('Pointer', { className: { type: 'string' }, objectId: { type: 'string' } }, ['className', 'objectId']),
  'Parse.Relation': typed('Relation', { className: { type: 'string' } }, ['className']),
  'Parse.File': typed('File', { name: { type: 'string' }, url: { type: 'string', format: 'uri' } }, ['name']),
  'Parse.GeoPoint': typed('GeoPoint', { latitude: { type: 'number', minimum: -90, maximum: 90 }, longitude: { type: 'number', minimum: -180, maximum: 180 } }, ['latitude', 'longitude']),
  'Parse.Polygon': typed('Polygon', { coordinates: { type: 'array', minItems: 3, items: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 } } }, ['coordinates']),
  'Parse.Bytes': typed('Bytes', { base64: { type: 'string', contentEncoding: 'base64' } }, ['base64']),
  'Parse.ACL': {
    type: 'object',
    description: 'Keys are "*", user objectIds and "role:<name>".',
    additionalProperties: { type: 'object', properties: { read: { type: 'boolean' }, write: { type: 'boolean' } }, additionalProperties: false },
  },
  'Parse.Operation': {
    type: 'object',
    required: ['__op'],
    description: 'An update operator: Delete, Increment {amount}, Add/AddUnique/Remove {objects}, AddRelation/RemoveRelation {objects}, Batch {ops}.',
    properties: { __op: { enum: ['Delete', 'Increment', 'Add', 'AddUnique', 'Remove', 'AddRelation', 'RemoveRelation', 'Batch'] } },
  },
  'Parse.Error': {
    type: 'object',
    required: ['error'],
    properties: { code: { type: 'integer', description: 'Parse error code, e.g. 101 object not found, 102 invalid query.' }, error: { type: 'string' } },
  },
};

/** The JSON Schema of one field type as the API answers it. */
function fieldSchema(field: FieldType): Json {
  switch (field.type) {
    case 'String':
      return { type: 'string' };
    case 'Number':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'Object':
      return { type: 'object' };
    case 'Array':
      return { type: 'array' };
    case 'Pointer':
      return { ...ref('Parse.Pointer'), description: `Pointer to ${field.targetClass}`, properties: { className: { const: field.targetClass } } };
    case 'Relation':
      return { ...ref('Parse.Relation'), description: `Relation to ${field.targetClass}`, properties: { className: { const: field.targetClass } } };
    case 'ACL':
      return ref('Parse.ACL');
    default:
      return ref(`Parse.${field.type}`);
  }
}

/** Output and input component schemas of a class (`<Class>`, `<Class>.input`). */
function classSchemas(cls: StoredClass): Record<string, Json> {
  const hidden = cls.className === '_User' ? new Set(['password']) : new Set<string>();
  const fields = Object.entries(cls.fields).filter(([name]) => !(name in DEFAULT_FIELDS));
  const output: Json = {
    type: 'object',
    required: ['objectId', 'createdAt', 'updatedAt'],
    properties: {
      objectId: { type: 'string', pattern: '^[A-Za-z0-9]+$' },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      ACL: ref('Parse.ACL'),
      ...Object.fromEntries(fields.filter(([name]) => !hidden.has(name)).map(([name, type]) => [name, fieldSchema(type)])),
    },
  };
  const input: Json = {
    type: 'object',
    description: `Fields of ${cls.className}; a new key extends the schema. On update, a field may hold an operation.`,
    properties: {
      ACL: ref('Parse.ACL'),
      ...Object.fromEntries(fields.map(([name, type]) => [name, { anyOf: [fieldSchema(type), ref('Parse.Operation'), { type: 'null' }] }])),
    },
  };
  return { [cls.className]: output, [`${cls.className}.input`]: input };
}

const json = (schema: Json, description: string) => ({ description, content: { 'application/json': { schema } } });
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [String(s), { $ref: '#/components/responses/Error' }]));
const body = (schema: Json) => ({ required: true, content: { 'application/json': { schema } } });
const MASTER = [{ applicationId: [], masterKey: [] }];

const QUERY_PARAMETERS: Json[] = [
  { name: 'where', in: 'query', description: 'JSON object of constraints, e.g. {"score":{"$gte":10}}.', schema: { type: 'string' } },
  { name: 'order', in: 'query', description: 'Comma-separated keys; a leading - sorts descending.', schema: { type: 'string' } },
  { name: 'limit', in: 'query', description: 'At most this many results (default 100).', schema: { type: 'integer', minimum: 0 } },
  { name: 'skip', in: 'query', schema: { type: 'integer', minimum: 0 } },
  { name: 'keys', in: 'query', description: 'Comma-separated keys to return.', schema: { type: 'string' } },
  { name: 'excludeKeys', in: 'query', schema: { type: 'string' } },
  { name: 'include', in: 'query', description: 'Comma-separated pointer keys to fetch with the results.', schema: { type: 'string' } },
  { name: 'count', in: 'query', description: '1 to add the total count.', schema: { type: 'integer', enum: [0, 1] } },
];
const OBJECT_ID = { name: 'objectId', in: 'path', required: true, schema: { type: 'string' } };

/** The five operations of one class at `base` (`/classes/<ClassName>`, or `/users` for `_User`). */
function classPaths(className: string, base: string): Record<string, Json> {
  const id = className;
  const tags = [className];
  const created = className === '_User' ? { objectId: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' }, sessionToken: { type: 'string' } } : { objectId: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' } };
  return {
    [base]: {
      get: {
        operationId: `find${id}`,
        tags,
        summary: `Query ${className} objects`,
        parameters: QUERY_PARAMETERS,
        responses: { 200: json({ type: 'object', required: ['results'], properties: { results: { type: 'array', items: ref(className) }, count: { type: 'integer' } } }, 'The matching objects'), ...errors(400, 403) },
      },
      post: {
        operationId: `create${id}`,
        tags,
        summary: className === '_User' ? 'Sign up a user' : `Create a ${className} object`,
        requestBody: body(ref(`${className}.input`)),
        responses: {
          201: { ...json({ type: 'object', required: ['objectId', 'createdAt'], properties: created }, 'Created'), headers: { Location: { description: 'The address of the new object', schema: { type: 'string', format: 'uri' } } } },
          ...errors(400, 403),
        },
      },
    },
    [`${base}/{objectId}`]: {
      parameters: [OBJECT_ID],
      get: { operationId: `get${id}`, tags, summary: `Fetch a ${className} object`, parameters: QUERY_PARAMETERS.filter((p) => ['keys', 'excludeKeys', 'include'].includes(p.name as string)), responses: { 200: json(ref(className), 'The object'), ...errors(400, 403, 404) } },
      put: { operationId: `update${id}`, tags, summary: `Update a ${className} object`, requestBody: body(ref(`${className}.input`)), responses: { 200: json({ type: 'object', required: ['updatedAt'], properties: { updatedAt: { type: 'string', format: 'date-time' } } }, 'Updated'), ...errors(400, 403, 404) } },
      delete: { operationId: `delete${id}`, tags, summary: `Delete a ${className} object`, responses: { 200: json({ type: 'object' }, 'Deleted: an empty object'), ...errors(400, 403, 404) } },
    },
  };
}

interface Endpoint {
  method: Method;
  path: string;
  /** A concrete path to ask the router whether it answers. */
  probe: string;
  summary: string;
  master?: boolean;
  public?: boolean;
  request?: Json;
  response?: Json;
  parameters?: Json[];
}

const name = (n: string) => ({ name: n, in: 'path', required: true, schema: { type: 'string' } });
const anyObject = { type: 'object' };

/** Endpoints beside the classes, documented when the router answers them. */
const ENDPOINTS: Endpoint[] = [
  { method: 'POST', path: '/login', probe: '/login', summary: 'Log in with username and password', request: { type: 'object', required: ['username', 'password'], properties: { username: { type: 'string' }, password: { type: 'string' } } }, response: ref('_User') },
  { method: 'POST', path: '/logout', probe: '/logout', summary: 'End the session of X-Backend-Session-Token' },
  { method: 'GET', path: '/users/me', probe: '/users/me', summary: 'The user of the session token', response: ref('_User') },
  { method: 'POST', path: '/batch', probe: '/batch', summary: 'Run up to 1000 requests; with "transaction": true all or none', request: { type: 'object', required: ['requests'], properties: { requests: { type: 'array', items: { type: 'object', required: ['method', 'path'], properties: { method: { enum: ['GET', 'POST', 'PUT', 'DELETE'] }, path: { type: 'string' }, body: anyObject } } }, transaction: { type: 'boolean' } } }, response: { type: 'array', items: { type: 'object', properties: { success: {}, error: ref('Parse.Error') } } } },
  { method: 'GET', path: '/schemas', probe: '/schemas', summary: 'Every class with its fields, permissions and indexes', master: true },
  { method: 'POST', path: '/schemas/{className}', probe: '/schemas/X', summary: 'Create a class', master: true, parameters: [name('className')], request: anyObject },
  { method: 'GET', path: '/schemas/{className}', probe: '/schemas/X', summary: 'One class', master: true, parameters: [name('className')] },
  { method: 'PUT', path: '/schemas/{className}', probe: '/schemas/X', summary: 'Add or delete fields, change permissions and indexes', master: true, parameters: [name('className')], request: anyObject },
  { method: 'DELETE', path: '/schemas/{className}', probe: '/schemas/X', summary: 'Drop an empty class', master: true, parameters: [name('className')] },
  { method: 'POST', path: '/files/{name}', probe: '/files/x', summary: 'Upload a file (the body with its Content-Type); answers {url, name}', parameters: [name('name')], request: anyObject },
  { method: 'DELETE', path: '/files/{name}', probe: '/files/x', summary: 'Delete a file', master: true, parameters: [name('name')] },
  { method: 'GET', path: '/config', probe: '/config', summary: 'Config parameters: {params}' },
  { method: 'PUT', path: '/config', probe: '/config', summary: 'Set config parameters: {params, masterKeyOnly}', master: true, request: anyObject },
  { method: 'GET', path: '/aggregate/{className}', probe: '/aggregate/X', summary: 'distinct=<field> or pipeline=[stages]', master: true, parameters: [name('className'), { name: 'distinct', in: 'query', schema: { type: 'string' } }, { name: 'pipeline', in: 'query', schema: { type: 'string' } }, { name: 'where', in: 'query', schema: { type: 'string' } }] },
  { method: 'DELETE', path: '/purge/{className}', probe: '/purge/X', summary: 'Delete every object of a class', master: true, parameters: [name('className')] },
  { method: 'POST', path: '/functions/{name}', probe: '/functions/x', summary: 'Run a cloud function; answers {result}', parameters: [name('name')], request: anyObject },
  { method: 'POST', path: '/jobs/{name}', probe: '/jobs/x', summary: 'Start a cloud job', master: true, parameters: [name('name')], request: anyObject },
  { method: 'POST', path: '/jobs', probe: '/jobs', summary: 'Start the cloud job named by "jobName"; the whole body is its params', master: true, request: { type: 'object', required: ['jobName'], properties: { jobName: { type: 'string' } } } },
  { method: 'GET', path: '/scriptlog', probe: '/scriptlog', summary: 'Cloud code log lines, newest first: [{level, message, timestamp, functionName?}]', master: true, parameters: ['level', 'n', 'size', 'order', 'from', 'until'].map((q) => ({ name: q, in: 'query', schema: { type: 'string' } })), response: { type: 'array', items: anyObject } },
  { method: 'GET', path: '/push_audiences', probe: '/push_audiences', summary: 'Saved push audiences (_Audience) with their query parsed', master: true },
  { method: 'POST', path: '/push_audiences', probe: '/push_audiences', summary: 'Save a push audience: {name, query: "<JSON where>"}', master: true, request: { type: 'object', properties: { name: { type: 'string' }, query: { type: 'string' } } } },
  { method: 'GET', path: '/push_audiences/{objectId}', probe: '/push_audiences/x', summary: 'One push audience', master: true, parameters: [name('objectId')] },
  { method: 'PUT', path: '/push_audiences/{objectId}', probe: '/push_audiences/x', summary: 'Change a push audience', master: true, parameters: [name('objectId')], request: anyObject },
  { method: 'DELETE', path: '/push_audiences/{objectId}', probe: '/push_audiences/x', summary: 'Delete a push audience', master: true, parameters: [name('objectId')] },
  { method: 'GET', path: '/security', probe: '/security', summary: 'Security check report: {report: {state, groups: [{name, state, checks}]}}', master: true },
  { method: 'GET', path: '/serverInfo', probe: '/serverInfo', summary: 'Server version and features' },
  { method: 'GET', path: '/health', probe: '/health', summary: 'Health check (no keys needed)', public: true },
  { method: 'GET', path: '/openapi.json', probe: '/openapi.json', summary: 'This document' },
];

const SECURITY_SCHEMES = {
  applicationId: { type: 'apiKey', in: 'header', name: 'X-Backend-Application-Id', description: 'Required on every request (X-Parse-Application-Id is accepted too).' },
  restApiKey: { type: 'apiKey', in: 'header', name: 'X-Backend-REST-API-Key', description: 'For server-side code; never in client apps.' },
  javascriptKey: { type: 'apiKey', in: 'header', name: 'X-Backend-JavaScript-Key', description: 'For web clients.' },
  clientKey: { type: 'apiKey', in: 'header', name: 'X-Backend-Client-Key', description: 'For mobile clients.' },
  windowsKey: { type: 'apiKey', in: 'header', name: 'X-Backend-Windows-Key', description: 'The .NET key.' },
  masterKey: { type: 'apiKey', in: 'header', name: 'X-Backend-Master-Key', description: 'Bypasses ACLs and permissions; never in a frontend.' },
  sessionToken: { type: 'apiKey', in: 'header', name: 'X-Backend-Session-Token', description: 'Add to a client key to act as a logged-in user.' },
};

/**
 * The OpenAPI 3.1 document of one app's data API, generated from its schema at call time (so it
 * changes when the schema does): per class, its query/create/get/update/delete paths
 * (`/classes/<ClassName>`, or `/users`, `/roles`, ... for system classes) and component schemas
 * `<ClassName>` (answers) and `<ClassName>.input` (bodies) with each field's JSON form; plus the
 * other endpoints this router answers; security schemes for the application id and key headers.
 */
export function dataApiDocument(req: Pick<DataRequest, 'engine' | 'mountUrl'>, router: DataRouter): Json {
  const schema = req.engine.schema;
  const classes = schema.all();
  if (!classes.some((c) => c.className === '_User')) classes.push(schema.blank('_User'));
  classes.sort((a, b) => (a.className < b.className ? -1 : 1));
  const aliases = new Map(Object.entries(CLASS_ALIASES).map(([alias, className]) => [className, `/${alias}`]));
  const paths: Record<string, Json> = {};
  for (const cls of classes) {
    const alias = aliases.get(cls.className);
    Object.assign(paths, classPaths(cls.className, alias && router.has('GET', alias) ? alias : `/classes/${cls.className}`));
  }
  for (const e of ENDPOINTS) {
    if (!router.has(e.method, e.probe)) continue;
    const item = (paths[e.path] ??= {}) as Json;
    const response = e.response ?? anyObject;
    item[e.method.toLowerCase()] = {
      operationId: `${e.method.toLowerCase()}${e.path.replace(/\{([^}]+)\}/g, 'By_$1').replace(/[^A-Za-z0-9_]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
      summary: e.summary,
      ...(e.public ? { security: [] } : e.master ? { security: MASTER } : {}),
      ...(e.parameters ? { parameters: e.parameters } : {}),
      ...(e.request ? { requestBody: body(e.request) } : {}),
      responses: { [e.method === 'POST' && e.path === '/files/{name}' ? 201 : 200]: json(response, 'Success'), ...(e.public ? {} : errors(400, 403)) },
    };
  }
  if (router.has('POST', '/files/x')) {
    paths[`/files/${req.engine.appId}/{name}`] = {
      get: {
        operationId: 'downloadFile',
        summary: 'Download a file by the url that its upload answered (no keys needed)',
        security: [],
        parameters: [
          name('name'),
          { name: 'Range', in: 'header', required: false, description: 'One span of bytes, e.g. bytes=0-1023, bytes=1024- or bytes=-500', schema: { type: 'string' } },
        ],
        responses: {
          200: { description: 'The file, with its content type', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
          206: { description: 'The bytes a Range asked for, with Content-Range', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
          404: { description: 'No such file' },
          416: { description: 'The Range starts past the end of the file (Content-Range: bytes */<size>)' },
        },
      },
    };
    paths[`/files/${req.engine.appId}/metadata/{name}`] = {
      get: {
        operationId: 'fileMetadata',
        summary: "A file's metadata as its upload gave it ({metadata}); {} for an unknown file (no keys needed)",
        security: [],
        parameters: [name('name')],
        responses: { 200: json({ type: 'object', properties: { metadata: { type: 'object' } } }, 'The metadata, or {}') },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `Backyard data API of app ${req.engine.appId}`,
      version: packageVersion(),
      description: 'Parse-compatible REST API. Errors are {code, error} with Parse error codes. Generated from the app\'s current schema.',
    },
    servers: [{ url: req.mountUrl }],
    security: ['restApiKey', 'javascriptKey', 'clientKey', 'windowsKey', 'masterKey'].map((key) => ({ applicationId: [], [key]: [] })),
    tags: classes.map((c) => ({ name: c.className, description: `Objects of class ${c.className}` })),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: { ...VALUE_SCHEMAS, ...Object.assign({}, ...classes.map(classSchemas)) },
      responses: { Error: json(ref('Parse.Error'), 'A Parse error: {code, error}') },
    },
  };
}

/** `GET /openapi.json`: the document of `dataApiDocument`, for any caller with the app's keys. */
export function openApiRoutes(router: DataRouter): void {
  router.on('GET', '/openapi.json', (req) => ok(dataApiDocument(req, router)));
}

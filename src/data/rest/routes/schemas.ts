import { ParseCode, ParseError } from '../../errors.js';
import { checkBodyClassName, classOrImplicit } from '../../schemaChanges.js';
import { checkClassName } from '../../schema.js';
import { isPlainObject } from '../../values.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

type SchemaRequest = Parameters<Parameters<DataRouter['on']>[2]>[0];

const bodyOf = (req: SchemaRequest): Record<string, unknown> => (isPlainObject(req.body) ? req.body : {});

/**
 * `/schemas` and `/schemas/<ClassName>` (Parse REST guide, "Schema"), master key only: read, create
 * a class with fields, CLP and indexes, change them (a field `{"__op":"Delete"}` removes it from
 * every object), and drop an empty class (schemaChanges.ts). 135 for a POST without a class name;
 * 103 for a class name in the body that differs from the path's.
 */
export function schemaRoutes(router: DataRouter): void {
  router.on('GET', '/schemas', (req) => {
    requireMaster(req);
    return ok({ results: req.engine.schema.all().map((c) => req.engine.schema.response(c)) });
  });
  router.on('GET', '/schemas/:className', (req, { className }) => {
    requireMaster(req);
    const cls = classOrImplicit(req.engine.schema, className!);
    if (!cls) throw new ParseError(ParseCode.INVALID_CLASS_NAME, `Class ${className} does not exist.`);
    return ok(req.engine.schema.response(cls));
  });
  const create = async (req: SchemaRequest, className: string) => {
    const body = bodyOf(req);
    checkBodyClassName(body, className);
    return ok(await req.services.schemas.create(className, body));
  };
  router.on('POST', '/schemas', (req) => {
    requireMaster(req);
    const name = isPlainObject(req.body) ? req.body.className : undefined;
    // Parse Server's SchemasRouter: a falsy className is missing (135), any other non-string is a bad name (103).
    if (!name) throw new ParseError(ParseCode.MISSING_REQUIRED_FIELD, 'POST /schemas needs a class name.');
    if (typeof name !== 'string') checkClassName(JSON.stringify(name));
    return create(req, name as string);
  });
  router.on('POST', '/schemas/:className', (req, { className }) => {
    requireMaster(req);
    return create(req, className!);
  });
  router.on('PUT', '/schemas/:className', async (req, { className }) => {
    requireMaster(req);
    const body = bodyOf(req);
    checkBodyClassName(body, className!);
    return ok(await req.services.schemas.update(className!, body));
  });
  router.on('DELETE', '/schemas/:className', async (req, { className }) => {
    requireMaster(req);
    await req.services.schemas.drop(className!);
    return ok({});
  });
}

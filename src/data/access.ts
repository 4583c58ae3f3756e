import type { Auth } from './auth/context.js';
import { ParseCode, ParseError } from './errors.js';
import { checkClassName, MASTER_ONLY_CLASSES, type Schema } from './schema.js';
import type { ServerSettings } from './settings.js';
import { SYSTEM_CLASSES } from './types.js';

/** The REST method a request is checked as (Parse Server's SharedRest method names). */
export type RestMethod = 'get' | 'find' | 'create' | 'update' | 'delete';

/**
 * Parse Server's `validateClientClassCreation`: with `allowClientClassCreation` off, a client may
 * neither create, update nor query a class that does not exist yet (system classes excepted).
 * @throws ParseError 119 "This user is not allowed to access non-existent class: <name>".
 */
export function checkClassCreation(schema: Schema, settings: ServerSettings, className: string, auth: Auth): void {
  if (auth.master || schema.has(className) || (SYSTEM_CLASSES as readonly string[]).includes(className)) return;
  if (settings.allowClientClassCreation) return;
  throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `This user is not allowed to access non-existent class: ${className}`);
}

/**
 * Parse Server's `enforceRoleSecurity` (SharedRest.js), run before anything else of a request:
 * clients may not find or delete `_Installation` objects, nor touch the master-only classes
 * (GHSA-7xg7-rqf6-pw6c).
 * @throws ParseError 103 for a bad class name; 119 "Clients aren't allowed to perform the find
 *   operation on the installation collection." and the like.
 */
export function enforceRoleSecurity(method: RestMethod, className: string, auth: Auth): void {
  checkClassName(className);
  const collection = roleSecurityRefuses(method, className, auth);
  if (collection) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `Clients aren't allowed to perform the ${method} operation on the ${collection} collection.`);
}

/** The collection `enforceRoleSecurity` names when it refuses the caller, else undefined. */
export function roleSecurityRefuses(method: RestMethod, className: string, auth: Auth): string | undefined {
  if (auth.master) return undefined;
  if (className === '_Installation') return method === 'find' || method === 'delete' ? 'installation' : undefined;
  return MASTER_ONLY_CLASSES.has(className) ? className : undefined;
}

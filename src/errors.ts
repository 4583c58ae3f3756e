/**
 * The kinds of failure a management operation can report (spec, Interface A, "Errors").
 * Domain services throw `ManagementError`; each front end maps it once:
 * REST to a status and a `text/plain` body, MCP to an `isError` result with the same text.
 *
 * - `invalid`      the caller sent something wrong (400)
 * - `unauthorized` no or a wrong credential (401)
 * - `forbidden`    a path outside what may be touched (403; only deployCloudCode and getCloudCode list it)
 * - `notFound`     an unknown id or name (404 where the operation lists it, else 400: docs/design.md, decision 3)
 * - `unavailable`  a part Backyard needs is not running, e.g. the Docker engine (500)
 */
export type ErrorKind = 'invalid' | 'unauthorized' | 'forbidden' | 'notFound' | 'unavailable';

/**
 * An error whose `message` is meant for the caller: one or two sentences saying what was wrong and
 * what to do instead (docs/design.md, decision 5). Never carries a secret or a stack trace.
 */
export class ManagementError extends Error {
  override name = 'ManagementError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new ManagementError('invalid', message);
export const notFound = (message: string) => new ManagementError('notFound', message);
export const forbidden = (message: string) => new ManagementError('forbidden', message);
export const unauthorized = (message: string) => new ManagementError('unauthorized', message);
export const unavailable = (message: string) => new ManagementError('unavailable', message);

/** The text a caller sees for a failure that is not theirs; details go to the log only. */
export const INTERNAL_ERROR_TEXT =
  'Backyard failed to complete the request because of an internal error. Try again; if it keeps failing, the server log has the details.';

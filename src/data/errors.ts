import { ManagementError } from '../errors.js';
import { isUnreachableDatabase } from '../shared/unreachable.js';

/**
 * Parse error codes used by the data API (the Parse JS SDK's `Parse.Error`; shared/notes/parse-protocol.md).
 */
export const ParseCode = {
  INTERNAL_SERVER_ERROR: 1,
  CONNECTION_FAILED: 100,
  OBJECT_NOT_FOUND: 101,
  INVALID_QUERY: 102,
  INVALID_CLASS_NAME: 103,
  MISSING_OBJECT_ID: 104,
  INVALID_KEY_NAME: 105,
  INVALID_POINTER: 106,
  INVALID_JSON: 107,
  COMMAND_UNAVAILABLE: 108,
  NOT_INITIALIZED: 109,
  INCORRECT_TYPE: 111,
  INVALID_CHANNEL_NAME: 112,
  PUSH_MISCONFIGURED: 115,
  OBJECT_TOO_LARGE: 116,
  OPERATION_FORBIDDEN: 119,
  CACHE_MISS: 120,
  INVALID_NESTED_KEY: 121,
  INVALID_FILE_NAME: 122,
  INVALID_ACL: 123,
  TIMEOUT: 124,
  INVALID_EMAIL_ADDRESS: 125,
  MISSING_CONTENT_TYPE: 126,
  MISSING_CONTENT_LENGTH: 127,
  INVALID_CONTENT_LENGTH: 128,
  FILE_TOO_LARGE: 129,
  FILE_SAVE_ERROR: 130,
  /** Parse Server's 132 for a device token several installations hold (RestWrite.handleInstallation). */
  INVALID_INSTALLATION_ID: 132,
  MISSING_REQUIRED_FIELD: 135,
  CHANGED_IMMUTABLE_FIELD: 136,
  DUPLICATE_VALUE: 137,
  INVALID_ROLE_NAME: 139,
  EXCEEDED_QUOTA: 140,
  SCRIPT_FAILED: 141,
  VALIDATION_ERROR: 142,
  INVALID_IMAGE_DATA: 143,
  /** Parse Server answers a bad or unknown webhook declaration with 143 too (HooksController). */
  WEBHOOK_ERROR: 143,
  FILE_DELETE_ERROR: 153,
  REQUEST_LIMIT_EXCEEDED: 155,
  INVALID_EVENT_NAME: 160,
  INVALID_VALUE: 162,
  USERNAME_MISSING: 200,
  PASSWORD_MISSING: 201,
  USERNAME_TAKEN: 202,
  EMAIL_TAKEN: 203,
  EMAIL_MISSING: 204,
  EMAIL_NOT_FOUND: 205,
  SESSION_MISSING: 206,
  MUST_CREATE_USER_THROUGH_SIGNUP: 207,
  ACCOUNT_ALREADY_LINKED: 208,
  INVALID_SESSION_TOKEN: 209,
  LINKED_ID_MISSING: 250,
  INVALID_LINKED_SESSION: 251,
  UNSUPPORTED_SERVICE: 252,
  CLASS_NOT_EMPTY: 255,
} as const;

/**
 * An error of the data API, answered as Parse does: `{code, error}` with status 404 for code 101,
 * 500 for code 1 and 400 otherwise (docs/design.md, decision 5). `status` overrides that mapping (e.g.
 * 403 for missing keys).
 */
export class ParseError extends Error {
  override name = 'ParseError';
  constructor(
    readonly code: number,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  /** The HTTP status Parse answers for this error. */
  get httpStatus(): number {
    if (this.status) return this.status;
    if (this.code === ParseCode.OBJECT_NOT_FOUND) return 404;
    if (this.code === ParseCode.INTERNAL_SERVER_ERROR) return 500;
    return 400;
  }
}

export const parseError = (code: number, message: string) => new ParseError(code, message);

/**
 * A failure of the app's database that the caller can act on, as a Parse error: SQLite's "database
 * is locked" (SQLITE_BUSY/SQLITE_LOCKED) means another process holds the app's `data.db`, which the
 * server keeps for itself (docs/design.md, "One process, one port"; storage/sqlite/adapter.ts). Answered
 * 503 with code 1, which the Parse SDK treats as a server error.
 * @returns the ParseError as it is, that conversion, or undefined for any other failure (a 500).
 */
export function asParseError(error: unknown): ParseError | undefined {
  if (error instanceof ParseError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof Error && error.name === 'SqliteError' && (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')) {
    return new ParseError(
      ParseCode.INTERNAL_SERVER_ERROR,
      "The app's database is held by another process (another Backyard serving the same home?). Serve each home from one process, then try again.",
      503,
    );
  }
  // The platform's store (on PostgreSQL) could not be read for the app's keys or options.
  if (error instanceof ManagementError && error.kind === 'unavailable') return new ParseError(ParseCode.INTERNAL_SERVER_ERROR, error.message, 503);
  if (isUnreachableDatabase(error)) {
    return new ParseError(ParseCode.INTERNAL_SERVER_ERROR, `The app's database (PostgreSQL) cannot be reached right now (${error.message}); try again later.`, 503);
  }
  return undefined;
}

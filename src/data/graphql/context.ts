import { GraphQLError } from 'graphql';
import type { StoredObject } from '../engine.js';

/** One data API call made on behalf of a GraphQL operation. */
export interface DataCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the data API's mount: `/classes/GameScore`, `/users/me`, `/login`. */
  path: string;
  /** Query parameters of a GET, as JSON values (`where` an object, `count` 1). */
  query?: Record<string, unknown>;
  body?: unknown;
  /** Raw bytes and their content type (a file upload: `POST /files/<name>`). */
  raw?: { data: Buffer; contentType: string };
  /** Acts with this session instead of the request's (a user just signed up or logged in). */
  sessionToken?: string;
  /** The object a write of this request stored (`write`'s answer), which a get of it takes instead of reading it again. */
  stored?: StoredObject;
}

/**
 * What resolvers get: the caller's data API, so that every operation passes the same checks as a
 * REST call with the same keys (ACLs, CLPs, protected fields, triggers, limits: the REST routes
 * themselves answer it). Built per request by the HTTP mount (src/data/rest/routes/graphql.ts).
 */
export interface GraphQLContext {
  /**
   * Runs one data API call and answers its JSON body.
   * @throws GraphQLError with `extensions.code` the Parse error code when the call answers an error.
   */
  call(call: DataCall): Promise<any>;
  /**
   * `call` for a create or an update, answering also the object it stored when no trigger of its
   * class ran (DataResponse.stored), for the read back that follows.
   * @throws as `call`.
   */
  write(call: DataCall): Promise<{ body: any; stored?: StoredObject }>;
  /**
   * Sets the password of the user a password reset `token` (mailed by `POST /requestPasswordReset`)
   * belongs to, as the reset page does (src/data/rest/routes/pages.ts; Parse Server's
   * `UserController.updatePassword`): the token is spent, and the user's sessions end when the
   * app's `revokeSessionOnPasswordReset` is on. The data API has no REST route for it.
   * @throws GraphQLError 201 for an empty password, 101 for a token that is unknown, spent or expired.
   */
  confirmResetPassword(token: string, password: string): Promise<void>;
  /** The request's session token, if any (`viewer`, `logOut`). */
  sessionToken?: string;
  /** Whether the request carries the master key (introspection). */
  master: boolean;
  /** The app's `maxLimit` option (src/data/settings.ts), which caps `last` as Parse caps it. */
  maxLimit: number | null;
}

/** A Parse error as a GraphQL error: the message, and the code under `extensions.code` (parse-server src/GraphQL/parseGraphQLUtils.js). */
export const parseError = (code: number, message: string): GraphQLError => new GraphQLError(message, { extensions: { code } });

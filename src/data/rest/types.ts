import type { Readable } from 'node:stream';
import type { AppKeys } from '../appKeys.js';
import type { DataApps } from '../apps.js';
import type { Auth } from '../auth/context.js';
import type { AppServices } from '../appServices.js';
import type { DataEngine, StoredObject } from '../engine.js';
import type { CloudRegistry } from '../cloud/types.js';
import type { DataServices } from '../services.js';
import type { UploadBody } from '../files.js';

/**
 * What routes get of DataApps: everything but the master view of an app (`DataApps.store`), which
 * they reach only through the services of the request (`DataRequest.services`).
 */
export type RouteApps = Omit<DataApps, 'store'>;

/** One data API call after credentials are resolved, whatever carried it (HTTP, batch, callBackendAPI). */
export interface DataRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the mount, e.g. `/classes/ToDo/abc`. */
  path: string;
  /** Query parameters (GET) or the SDK's body fields for a GET sent as POST. */
  query: Record<string, unknown>;
  body: unknown;
  /**
   * A file upload's raw body: its bytes as they arrive (the request stream, read by the route; or
   * bytes already read), its Content-Type and its Content-Length when the client sent one.
   */
  raw?: { body: UploadBody; contentType: string; length?: number };
  auth: Auth;
  /** The app's checking face (engine.ts): every call takes `auth`. The same as `services.engine`. */
  engine: DataEngine;
  /** The app's services (appServices.ts), which alone hold its master view. */
  services: AppServices;
  keys: AppKeys;
  apps: RouteApps;
  /** Cloud code, webhooks, schedules, mail, sign-in providers and the outbound client (services.ts). */
  context: DataServices;
  /** The data API's public root, for Location headers and URLs. */
  mountUrl: string;
  /**
   * True inside a transactional batch, whose `engine` and `services` are bound to the batch's transaction: a route
   * that waits on something else (bcrypt, a cloud code trigger) must refuse with
   * `refuseInTransaction` before it writes anything.
   */
  inTransaction?: boolean;
  /** What the app's cloud code registered, known before the route runs (which triggers to call). */
  registry: CloudRegistry;
  /**
   * The object a write of this caller just stored (DataResponse.stored), given back by an in-process
   * caller (GraphQL's read back after a mutation): a get of that object takes it from here instead of
   * reading it again, with every check a get makes. Never set from a client's request.
   */
  stored?: StoredObject;
  /**
   * Set by an in-process caller that reads its answers' `body` (GraphQL's context): a find answers
   * its objects rather than the JSON text the HTTP handler sends on (`jsonText`), which that caller
   * would parse back. Never set from a client's request.
   */
  readsObjects?: true;
}

export interface DataResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A raw answer (a page, a short text). */
  raw?: { data: Buffer; contentType: string };
  /**
   * `body` as JSON text, when the route wrote it already (`jsonText`): the HTTP handler sends it as
   * it is, and `body` parses it for those that read it (batches, GraphQL, `callBackendAPI`).
   */
  json?: string;
  /** An answer streamed (a downloaded file): `length` bytes of `body`. A failing stream cuts the answer off. */
  stream?: { body: Readable; contentType: string; length: number };
  /**
   * The object a create or update stored, when no trigger of its class ran or can run on a get of it
   * (DataRequest.stored); for in-process callers, never sent.
   */
  stored?: StoredObject;
}

export type RouteHandler = (req: DataRequest, params: Record<string, string>) => DataResponse | Promise<DataResponse>;

export const ok = (body: unknown, status = 200, headers?: Record<string, string>): DataResponse => ({ status, body, headers });

/**
 * A 200 whose body is already JSON text (DataResponse.json). `body` parses it when first read, and
 * from then on `json` is undefined: a caller that read the body may have changed it (the push
 * audiences' route parses each `query`), so the body is what gets sent.
 *
 * Both are getters of the class, not of an object literal: a literal whose getters are new closures
 * for each answer is in V8's dictionary mode (`%HasFastProperties` false; test/data-json-text.test.ts),
 * and the answers' texts then outlived every scavenge until the next full GC. With
 * the literal, an equality of 100 rows at one connection promoted about 20 KB per request to the
 * old generation and spent 10 ms in each scavenge (`node --trace-gc-nvp`: `promoted`, `pause`);
 * with the class, nothing was promoted and each scavenge took 0.6 ms. Being on the prototype, they
 * are not copied by an object spread: read `body` or `json` rather than spreading the answer.
 */
class JsonTextResponse implements DataResponse {
  readonly status = 200;
  readonly #text: string;
  #parsed: unknown;

  constructor(text: string) {
    this.#text = text;
  }

  get body(): unknown {
    return (this.#parsed ??= JSON.parse(this.#text));
  }

  get json(): string | undefined {
    return this.#parsed === undefined ? this.#text : undefined;
  }
}

/** The 200 answer of JSON text `text` (JsonTextResponse). */
export const jsonText = (text: string): DataResponse => new JsonTextResponse(text);

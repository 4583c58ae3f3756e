import type { Readable } from 'node:stream';
import type { AppKeys } from '../appKeys.js';
import type { DataApps } from '../apps.js';
import type { Auth } from '../auth/context.js';
import type { AppServices } from '../appServices.js';
import type { DataEngine } from '../engine.js';
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
}

export interface DataResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A raw answer (a page, a short text). */
  raw?: { data: Buffer; contentType: string };
  /** An answer streamed (a downloaded file): `length` bytes of `body`. A failing stream cuts the answer off. */
  stream?: { body: Readable; contentType: string; length: number };
}

export type RouteHandler = (req: DataRequest, params: Record<string, string>) => DataResponse | Promise<DataResponse>;

export const ok = (body: unknown, status = 200, headers?: Record<string, string>): DataResponse => ({ status, body, headers });

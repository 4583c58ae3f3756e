import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../../log.js';
import type { AppKeys, DataApps } from '../apps.js';
import { aclAllows, type Auth, MASTER } from '../auth/context.js';
import { clientAuth } from '../auth/sessions.js';
import type { DataEngine } from '../engine.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import type { ObjectChange } from './changes.js';
import { checkLiveWhere, matchesWhere } from './matcher.js';
import { afterLiveQueryEvent, beforeSubscribe, hasTrigger, onLiveQueryEvent } from '../cloud/hooks.js';
import { randomUUID } from 'node:crypto';
import type { Broadcast } from '../storage/provider.js';
import { EVERYTHING } from '../storage/provider.js';

/** The broadcast topic of object changes between processes (PostgreSQL's NOTIFY). */
const TOPIC = 'livequery';
/** PostgreSQL's NOTIFY payloads stop at 8000 bytes; a change larger than this stays in its process. */
const MAX_PEER_PAYLOAD = 7900;

/** Largest message a client may send (a subscription's query). */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Most subscriptions one connection holds: each costs memory and a match per change of its class. */
export const MAX_SUBSCRIPTIONS = 1000;

type Json = Record<string, unknown>;

/** One subscription of a client: a class, a `where`, the fields to send (`keys`) and to watch. */
interface Subscription {
  className: string;
  where: Json;
  keys: string[] | undefined;
  watch: string[] | undefined;
  auth: Auth;
}

/** A connected WebSocket client of one app (after `connect`). */
interface Client {
  id: number;
  socket: WebSocket;
  appId: string;
  engine: DataEngine;
  keys: AppKeys;
  /** The auth of `connect` (its key and sessionToken), for subscriptions without a token of their own. */
  auth: Auth;
  subscriptions: Map<number, Subscription>;
  /** Events waiting on cloud code's afterLiveQueryEvent, sent in order. */
  queue: Promise<void>;
}

/**
 * Parse's LiveQuery server (Parse LiveQuery protocol; issue 17): WebSocket clients at the data API's
 * address (`ws://<host>/data`, upgraded on the HTTP port) `connect` with an app's keys, `subscribe`
 * to a query of a class listed in the app's `liveQuery.classNames`, and receive `create`, `enter`,
 * `update`, `leave` and `delete` events for objects saved through the data engine (REST, batch,
 * cloud code, the dashboard, callBackendAPI): only objects the subscriber may read (ACL, the class's
 * `find` permission), without its protected fields, and only the `keys` asked for.
 * With several processes on one PostgreSQL (issue 16), a change is also announced to the others
 * (NOTIFY), whose subscribers get it too; a change whose rows exceed NOTIFY's 8000 bytes reaches the
 * subscribers of the process that made it only.
 */
export class LiveQueryServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly clients = new Map<string, Set<Client>>();
  private nextClientId = 1;
  private readonly processId = randomUUID();
  private readonly watched = new WeakSet<DataEngine>();

  constructor(
    private readonly apps: DataApps,
    private readonly log: Logger,
    /** The other processes serving the same database (PostgreSQL), if any. */
    private readonly broadcast?: Broadcast,
  ) {
    this.broadcast
      ?.subscribe(TOPIC, (payload) => {
        if (payload !== EVERYTHING) void this.fromPeer(payload);
      })
      .catch((err: unknown) => this.log.error({ err }, 'LiveQuery could not listen to the other processes'));
  }

  /**
   * Follows an app's committed changes (DataApps calls it for each engine it opens), so that they
   * reach this process's subscribers and, on PostgreSQL, the other processes'.
   */
  watch(appId: string, engine: DataEngine): void {
    if (this.watched.has(engine)) return;
    this.watched.add(engine);
    engine.changes.listen((change) => {
      if (!engine.settings().liveQuery.classNames.includes(change.className)) return;
      this.publish(appId, engine, change);
      if (!this.broadcast) return;
      const payload = JSON.stringify({ from: this.processId, appId, change });
      if (Buffer.byteLength(payload) <= MAX_PEER_PAYLOAD) this.broadcast.publish(TOPIC, payload).catch((err: unknown) => this.log.warn({ err }, 'LiveQuery could not tell the other processes'));
    });
  }

  /** A change another process announced: to this process's subscribers of the app. */
  private async fromPeer(payload: string): Promise<void> {
    try {
      const { from, appId, change } = JSON.parse(payload) as { from: string; appId: string; change: ObjectChange };
      if (from === this.processId || !this.clients.get(appId)?.size) return;
      const engine = await this.apps.engine(appId);
      if (engine) this.publish(appId, engine, change);
    } catch (err) {
      this.log.warn({ err }, 'LiveQuery could not follow another process');
    }
  }

  /** Takes over an HTTP upgrade request for the data API's path. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  /** Closes every connection. */
  close(): void {
    for (const set of this.clients.values()) for (const client of set) client.socket.close(1001, 'server closing');
    this.wss.close();
  }

  private accept(socket: WebSocket): void {
    let client: Client | undefined;
    let queue = Promise.resolve();
    socket.on('message', (raw) => {
      // One message at a time, in order: a subscribe may not overtake its connect.
      queue = queue.then(async () => {
        let message: Json;
        try {
          const parsed: unknown = JSON.parse(raw.toString());
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error();
          message = parsed as Json;
        } catch {
          return send(socket, { op: 'error', code: ParseCode.INVALID_JSON, error: 'A LiveQuery message must be a JSON object with an "op".', reconnect: false });
        }
        const requestId = typeof message.requestId === 'number' ? message.requestId : undefined;
        try {
          if (message.op === 'connect') {
            if (client) throw new ParseError(ParseCode.INTERNAL_SERVER_ERROR, 'This connection is connected already.');
            client = await this.connect(socket, message);
            return;
          }
          if (!client) throw new ParseError(ParseCode.INTERNAL_SERVER_ERROR, 'Send {"op": "connect", "applicationId": ...} before anything else.');
          if (message.op === 'subscribe' || message.op === 'update') return await this.subscribe(client, message, requestId);
          if (message.op === 'unsubscribe') return this.unsubscribe(client, requestId);
          throw new ParseError(ParseCode.INTERNAL_SERVER_ERROR, `Unknown op ${JSON.stringify(message.op)}: use connect, subscribe, update or unsubscribe.`);
        } catch (error) {
          const parseError = error instanceof ParseError ? error : undefined;
          if (!parseError) this.log.warn({ err: error }, 'LiveQuery message failed');
          send(socket, {
            op: 'error',
            ...(client ? { clientId: client.id } : {}),
            ...(requestId !== undefined && message.op !== 'connect' ? { requestId } : {}),
            code: parseError?.code ?? ParseCode.INTERNAL_SERVER_ERROR,
            error: parseError?.message ?? 'The LiveQuery server failed; try again.',
            reconnect: false,
          });
        }
      });
    });
    socket.on('close', () => {
      if (!client) return;
      this.clients.get(client.appId)?.delete(client);
      this.tellCloud(client, 'ws_disconnect');
    });
    socket.on('error', () => socket.terminate());
  }

  /**
   * `connect`: the app's id and one of its keys (the master key gives master access), and an
   * optional session token for the connection's subscriptions.
   * @throws ParseError 4 for an unknown application id or a key that is not the app's; 209 for a bad token.
   */
  private async connect(socket: WebSocket, message: Json): Promise<Client> {
    const appId = typeof message.applicationId === 'string' ? message.applicationId : '';
    const keys = appId ? await this.apps.keys(appId) : undefined;
    const engine = keys && (await this.apps.engine(appId));
    if (!keys || !engine) throw new ParseError(4, 'Invalid application ID or key.');
    const given = (name: string) => (typeof message[name] === 'string' ? (message[name] as string) : undefined);
    const master = given('masterKey') !== undefined && given('masterKey') === keys.masterKey;
    const clientKeys = [given('javascriptKey'), given('clientKey'), given('restAPIKey'), given('windowsKey')].filter((k) => k !== undefined);
    const keyOk = master || clientKeys.some((k) => k === keys.javascriptKey || k === keys.clientKey || k === keys.restKey || k === keys.dotnetKey);
    if (!keyOk) throw new ParseError(4, 'Invalid application ID or key.');
    const auth = master ? MASTER : await clientAuth(engine, given('sessionToken'), given('installationId'));
    const client: Client = { id: this.nextClientId++, socket, appId, engine, keys, auth, subscriptions: new Map(), queue: Promise.resolve() };
    if (!this.clients.has(appId)) this.clients.set(appId, new Set());
    this.clients.get(appId)!.add(client);
    this.watch(appId, engine);
    send(socket, { op: 'connected', clientId: client.id });
    this.tellCloud(client, 'connect', { sessionToken: given('sessionToken') });
    return client;
  }

  /**
   * `subscribe` (or `update`, which replaces a subscription): a class, a `where` that LiveQuery can
   * match, `keys` and `watch`, and the subscription's own session token if any.
   * @throws ParseError 102 for a bad query, 119 when the class's `find` permission refuses the caller
   *   or the `where` names a field hidden from it (GHSA-j7mm-f4rv-6q6q), 209 for a bad token.
   */
  private async subscribe(client: Client, message: Json, requestId: number | undefined): Promise<void> {
    if (requestId === undefined || !Number.isInteger(requestId)) throw new ParseError(ParseCode.INVALID_QUERY, 'requestId must be an integer.');
    if (!client.subscriptions.has(requestId) && client.subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new ParseError(ParseCode.INVALID_QUERY, `A connection holds at most ${MAX_SUBSCRIPTIONS} subscriptions; unsubscribe some, or open another connection.`);
    }
    const query = message.query as Json | undefined;
    if (typeof query !== 'object' || query === null) throw new ParseError(ParseCode.INVALID_QUERY, 'query must be an object with className and where.');
    const className = query.className;
    if (typeof className !== 'string' || className === '') throw new ParseError(ParseCode.INVALID_CLASS_NAME, 'query.className must name a class.');
    const asked = (query.where ?? {}) as Json;
    checkLiveWhere(asked, 'query.where');
    const list = (name: 'keys' | 'watch' | 'fields'): string[] | undefined => {
      const value = query[name];
      if (value === undefined || value === null) return undefined;
      if (!Array.isArray(value) || !value.every((k) => typeof k === 'string')) throw new ParseError(ParseCode.INVALID_QUERY, `query.${name} must be a list of field names.`);
      return value as string[];
    };
    const token = typeof message.sessionToken === 'string' ? message.sessionToken : undefined;
    const auth = token ? await clientAuth(client.engine, token, client.auth.installationId) : client.auth;
    if (!client.engine.allows(className, 'find', auth)) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `Permission denied for action find on class ${className}.`);
    // Cloud code's beforeSubscribe may refuse or change the query; what it returns is checked like the client's.
    const registry = this.apps.cloud.registryNow(client.appId) ?? (await this.apps.cloud.registry(client.appId));
    const decided = await beforeSubscribe({ cloud: this.apps.cloud, registry, engine: client.engine, auth }, className, { where: asked, keys: list('keys') ?? list('fields') });
    const where = decided.where as Json;
    if (where !== asked) checkLiveWhere(where, 'the query beforeSubscribe returned');
    const named = fieldsOf(where);
    const probe = Object.fromEntries(named.map((f) => [f, true]));
    const visible = client.engine.protect(className, probe, auth);
    const hidden = named.filter((f) => !(f in visible));
    if (hidden.length) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `This user is not allowed to query ${hidden[0]} on class ${className}.`);
    client.subscriptions.set(requestId, { className, where, keys: decided.keys, watch: list('watch'), auth });
    send(client.socket, { op: 'subscribed', clientId: client.id, requestId });
    this.tellCloud(client, 'subscribe', { sessionToken: token });
  }

  private unsubscribe(client: Client, requestId: number | undefined): void {
    if (requestId === undefined || !client.subscriptions.delete(requestId)) {
      throw new ParseError(ParseCode.INTERNAL_SERVER_ERROR, `There is no subscription with requestId ${String(requestId)} on this connection.`);
    }
    send(client.socket, { op: 'unsubscribed', clientId: client.id, requestId });
    this.tellCloud(client, 'unsubscribe');
  }

  /** The numbers cloud code's LiveQuery hooks are told: connections and subscriptions of the app here. */
  private counts(appId: string): { clients: number; subscriptions: number } {
    const clients = this.clients.get(appId) ?? new Set<Client>();
    let subscriptions = 0;
    for (const c of clients) subscriptions += c.subscriptions.size;
    return { clients: clients.size, subscriptions };
  }

  /** Cloud code's `onLiveQueryEvent`, when registered (not waited for). */
  private tellCloud(client: Client, event: string, extra: Record<string, unknown> = {}): void {
    onLiveQueryEvent(this.apps.cloud, this.apps.cloud.registryNow(client.appId), client.appId, {
      event,
      ...this.counts(client.appId),
      master: client.auth.master,
      installationId: client.auth.installationId,
      ...extra,
    });
  }

  /** Sends one committed change to every subscription it concerns (Parse Server's _onAfterSave/_onAfterDelete). */
  private publish(appId: string, engine: DataEngine, change: ObjectChange): void {
    const clients = this.clients.get(appId);
    if (!clients?.size) return;
    const { className } = change;
    const objectRow = change.kind === 'save' ? change.object : undefined;
    const object: Json | undefined = objectRow && { ...engine.toJson(className, objectRow), className };
    const original: Json | undefined = change.original && { ...engine.toJson(className, change.original), className };
    const registry = this.apps.cloud.registryNow(appId);
    const withTrigger = registry !== undefined && hasTrigger(registry, className, 'afterLiveQueryEvent');
    for (const client of clients) {
      for (const [requestId, sub] of client.subscriptions) {
        if (sub.className !== className || !engine.allows(className, 'find', sub.auth)) continue;
        const before = original !== undefined && readable(change.original, sub.auth) && matchesWhere(original, sub.where);
        const after = object !== undefined && readable(objectRow, sub.auth) && matchesWhere(object, sub.where);
        let op: string | undefined;
        if (change.kind === 'delete') op = before ? 'delete' : undefined;
        else if (before && after) op = sub.watch && !sub.watch.some((f) => JSON.stringify(object![f]) !== JSON.stringify(original![f])) ? undefined : 'update';
        else if (before) op = 'leave';
        else if (after) op = original ? 'enter' : 'create';
        if (!op) continue;
        const shown = (json: Json) => select(engine.protect(className, json, sub.auth), sub.keys);
        const whole = op === 'delete' ? original! : op === 'leave' ? object ?? original! : object!;
        const withOriginal = op === 'update' || op === 'enter' || op === 'leave';
        if (!withTrigger) {
          const event: Json = { op, clientId: client.id, requestId, object: shown(whole) };
          if (withOriginal) event.original = shown(original!);
          send(client.socket, event);
          continue;
        }
        // Cloud code's afterLiveQueryEvent sees the whole object and may change or withhold it; events stay in order.
        const decided = afterLiveQueryEvent({ cloud: this.apps.cloud, registry: registry!, engine, auth: sub.auth }, className, {
          event: op,
          object: whole,
          ...(withOriginal ? { original } : {}),
          ...this.counts(appId),
        });
        client.queue = client.queue.then(async () => {
          const { send: sending, object: changed } = await decided;
          if (!sending) return;
          const event: Json = { op, clientId: client.id, requestId, object: shown(changed) };
          if (withOriginal) event.original = shown(original!);
          send(client.socket, event);
        });
      }
    }
  }
}

const readable = (row: StoredRow | undefined, auth: Auth) => row !== undefined && aclAllows(row.acl, auth, 'read');

/** The fields a `where` names (top-level keys and those inside $and/$or/$nor), dotted keys by their first part. */
function fieldsOf(where: Json): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and' || key === '$or' || key === '$nor') for (const part of value as Json[]) out.push(...fieldsOf(part));
    else out.push(key.split('.')[0]!);
  }
  return out;
}

/** The object with only `keys` (and what identifies it), or whole without `keys`. */
function select(object: Json, keys: string[] | undefined): Json {
  if (!keys) return object;
  const kept: Json = {};
  for (const key of ['className', 'objectId', 'createdAt', 'updatedAt', ...keys]) if (key in object) kept[key] = object[key];
  return kept;
}

function send(socket: WebSocket, message: Json): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

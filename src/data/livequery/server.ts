import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../../log.js';
import type { AppKeys } from '../appKeys.js';
import type { DataApps } from '../apps.js';
import { aclAllows, type Auth, MASTER } from '../auth/context.js';
import { checkingFace, type DataEngine } from '../engine.js';
import type { DataStore } from '../store.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import type { ObjectChange } from './changes.js';
import { checkLiveWhere, matchesWhere } from './matcher.js';
import { afterLiveQueryEvent, beforeSubscribe, hasTrigger, onLiveQueryEvent } from '../cloud/hooks.js';
import type { CloudRegistry, CloudRuntime } from '../cloud/types.js';
import { randomUUID } from 'node:crypto';
import type { Broadcast } from '../storage/provider.js';
import { EVERYTHING } from '../storage/provider.js';
import { SESSION_RECHECK_MS, SessionChecks, endedSessions } from './sessions.js';
import { MAX_NESTING, nestsDeeperThan } from '../nesting.js';

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
  /** The session token it acts with (its own, else its connection's), checked again for every event. */
  token: string | undefined;
  /** Its auth at subscribe; for events, that of `token` as known now. */
  auth: Auth;
}

/** A connected WebSocket client of one app (after `connect`). */
interface Client {
  id: number;
  socket: WebSocket;
  appId: string;
  engine: DataEngine;
  /** The app's master view, for session checks (sessions.ts). */
  store: DataStore;
  keys: AppKeys;
  /** The auth of `connect` (its key and sessionToken), for subscriptions without a token of their own. */
  auth: Auth;
  /** The session token given at `connect` (not kept with the master key, which needs none). */
  token: string | undefined;
  subscriptions: Map<number, Subscription>;
  /** Subscriptions ended with their session: an unsubscribe of one is answered as if it still were (the JS SDK waits for that answer). */
  ended: Set<number>;
  /** Events waiting on a session check or cloud code's afterLiveQueryEvent, sent in order. */
  queue: Promise<void>;
  /** How many events `queue` holds: while any, later events queue behind them. */
  pending: number;
}

/**
 * Parse's LiveQuery server (Parse LiveQuery protocol): WebSocket clients at the data API's
 * address (`ws://<host>/data`, upgraded on the HTTP port) `connect` with an app's keys, `subscribe`
 * to a query of a class listed in the app's `liveQuery.classNames`, and receive `create`, `enter`,
 * `update`, `leave` and `delete` events for objects saved through the data engine (REST, batch,
 * cloud code, the dashboard, callBackendAPI): only objects the subscriber may read (ACL, the class's
 * `find` permission), without its protected fields, and only the `keys` asked for.
 * With several processes on one PostgreSQL, a change is also announced to the others
 * (NOTIFY), whose subscribers get it too; a change whose rows exceed NOTIFY's 8000 bytes reaches the
 * subscribers of the process that made it only.
 * A subscription's session token is checked again for every event (known for at most
 * SESSION_RECHECK_MS, as Parse Server's LiveQuery caches it) and every SESSION_RECHECK_MS: once its
 * session is logged out, deleted or expired, its subscriptions end with Parse's 209 "Invalid session
 * token" error and get no further event. A session ended through this process ends them at once.
 */
export class LiveQueryServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly clients = new Map<string, Set<Client>>();
  private nextClientId = 1;
  private readonly processId = randomUUID();
  private readonly watched = new WeakSet<DataStore>();
  private readonly sessions = new SessionChecks();
  /** The periodic check of every session token held (sessions ended by another process, or expired). */
  private recheckTimer: NodeJS.Timeout | undefined;
  private rechecking = false;
  private started = false;

  constructor(
    private readonly apps: DataApps,
    /** The apps' cloud code (with webhooks in front: `DataServices.cloud`), for the LiveQuery triggers. */
    private readonly cloud: CloudRuntime,
    private readonly log: Logger,
    /** The other processes serving the same database (PostgreSQL), if any. */
    private readonly broadcast?: Broadcast,
  ) {}

  /**
   * Starts the background work: the periodic check of the session tokens held, and hearing the
   * changes other processes announce. Resolves once listening; a failure to listen is logged.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.recheckTimer = setInterval(() => void this.recheck(), SESSION_RECHECK_MS);
    this.recheckTimer.unref();
    await this.broadcast
      ?.subscribe(TOPIC, (payload) => {
        if (payload !== EVERYTHING) void this.fromPeer(payload);
      })
      .catch((err: unknown) => this.log.error({ err }, 'LiveQuery could not listen to the other processes'));
  }

  /**
   * Follows an app's committed changes (DataApps calls it for each store it opens), so that they
   * reach this process's subscribers and, on PostgreSQL, the other processes'.
   */
  watch(appId: string, store: DataStore): void {
    if (this.watched.has(store)) return;
    this.watched.add(store);
    store.changes.listen((change) => {
      this.followSessions(appId, change);
      if (!store.settings().liveQuery.classNames.includes(change.className)) return;
      this.publish(appId, store, change);
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
      this.followSessions(appId, change);
      const store = await this.apps.store(appId);
      if (store) this.publish(appId, store, change);
    } catch (err) {
      this.log.warn({ err }, 'LiveQuery could not follow another process');
    }
  }

  /** Takes over an HTTP upgrade request for the data API's path. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  /**
   * What a change means for the sessions LiveQuery holds: a deleted `_Session` (a logout, a password
   * change, a delete with the master key) ends its token's subscriptions at once; a changed `_Role`
   * makes every token's roles be read again.
   */
  private followSessions(appId: string, change: ObjectChange): void {
    if (change.className === '_Role') return this.sessions.forgetGrants(appId);
    if (change.className !== '_Session' || change.kind !== 'delete') return;
    const token = change.original.data.sessionToken;
    if (typeof token === 'string') this.endSession(appId, token);
  }

  /**
   * Ends a session's subscriptions: each gets Parse's error (ParseLiveQueryServer.js `pushError`:
   * `{op, error, code, reconnect, requestId}`, 209 "Invalid session token", no reconnect) and no
   * further event; the connection stays open for its other subscriptions.
   */
  private endSession(appId: string, token: string): void {
    this.sessions.end(appId, token);
    for (const client of this.clients.get(appId) ?? []) {
      for (const [requestId, sub] of client.subscriptions) {
        if (sub.token !== token) continue;
        client.subscriptions.delete(requestId);
        client.ended.add(requestId);
        if (client.ended.size > MAX_SUBSCRIPTIONS) client.ended.delete(client.ended.values().next().value!);
        send(client.socket, { op: 'error', error: 'Invalid session token', code: ParseCode.INVALID_SESSION_TOKEN, reconnect: false, requestId });
      }
    }
  }

  /** Every SESSION_RECHECK_MS: the tokens of all subscriptions, one `_Session` read per app, and those gone ended. */
  private async recheck(): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      for (const [appId, clients] of this.clients) {
        const tokens = new Set<string>();
        let store: DataStore | undefined;
        for (const client of clients) {
          store = client.store;
          for (const sub of client.subscriptions.values()) if (sub.token) tokens.add(sub.token);
        }
        if (!store || tokens.size === 0) continue;
        try {
          for (const token of await endedSessions(store, [...tokens])) this.endSession(appId, token);
        } catch (err) {
          this.log.warn({ err, app: appId }, 'LiveQuery could not check its subscribers\' sessions');
        }
      }
    } finally {
      this.rechecking = false;
    }
  }

  /** Closes every connection. */
  close(): void {
    if (this.recheckTimer) clearInterval(this.recheckTimer);
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
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || nestsDeeperThan(parsed)) throw new Error();
          message = parsed as Json;
        } catch {
          return send(socket, { op: 'error', code: ParseCode.INVALID_JSON, error: `A LiveQuery message must be a JSON object with an "op", nesting at most ${MAX_NESTING} levels.`, reconnect: false });
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
    const store = keys && (await this.apps.store(appId));
    if (!keys || !store) throw new ParseError(4, 'Invalid application ID or key.');
    const given = (name: string) => (typeof message[name] === 'string' ? (message[name] as string) : undefined);
    const master = given('masterKey') !== undefined && given('masterKey') === keys.masterKey;
    const clientKeys = [given('javascriptKey'), given('clientKey'), given('restAPIKey'), given('windowsKey')].filter((k) => k !== undefined);
    const keyOk = master || clientKeys.some((k) => k === keys.javascriptKey || k === keys.clientKey || k === keys.restKey || k === keys.dotnetKey);
    if (!keyOk) throw new ParseError(4, 'Invalid application ID or key.');
    const token = master ? undefined : given('sessionToken');
    const installationId = given('installationId');
    const auth: Auth = master ? MASTER : token ? await this.sessions.auth(store, token, installationId) : { master: false, principals: ['*'], installationId };
    const engine = checkingFace(store);
    const client: Client = { id: this.nextClientId++, socket, appId, engine, store, keys, auth, token, subscriptions: new Map(), ended: new Set(), queue: Promise.resolve(), pending: 0 };
    if (!this.clients.has(appId)) this.clients.set(appId, new Set());
    this.clients.get(appId)!.add(client);
    this.watch(appId, store);
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
    const own = typeof message.sessionToken === 'string' ? message.sessionToken : undefined;
    // Without a token of its own, the connection's, checked again: it may have ended since connect.
    const token = own ?? client.token;
    const auth = token ? await this.sessions.auth(client.store, token, client.auth.installationId) : client.auth;
    if (!client.engine.allows(className, 'find', auth)) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `Permission denied for action find on class ${className}.`);
    // Cloud code's beforeSubscribe may refuse or change the query; what it returns is checked like the client's.
    const registry = this.cloud.registryNow(client.appId) ?? (await this.cloud.registry(client.appId));
    const decided = await beforeSubscribe({ cloud: this.cloud, registry, engine: client.engine, auth }, className, { where: asked, keys: list('keys') ?? list('fields') });
    const where = decided.where as Json;
    if (where !== asked) checkLiveWhere(where, 'the query beforeSubscribe returned');
    const named = fieldsOf(where);
    const probe = Object.fromEntries(named.map((f) => [f, true]));
    const visible = client.engine.protect(className, probe, auth);
    const hidden = named.filter((f) => !(f in visible));
    if (hidden.length) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `This user is not allowed to query ${hidden[0]} on class ${className}.`);
    client.subscriptions.set(requestId, { className, where, keys: decided.keys, watch: list('watch'), token, auth });
    client.ended.delete(requestId);
    send(client.socket, { op: 'subscribed', clientId: client.id, requestId });
    this.tellCloud(client, 'subscribe', { sessionToken: own });
  }

  private unsubscribe(client: Client, requestId: number | undefined): void {
    if (requestId === undefined || !(client.subscriptions.delete(requestId) || client.ended.delete(requestId))) {
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
    onLiveQueryEvent(this.cloud, this.cloud.registryNow(client.appId), client.appId, {
      event,
      ...this.counts(client.appId),
      master: client.auth.master,
      installationId: client.auth.installationId,
      ...extra,
    });
  }

  /**
   * Sends one committed change to every subscription it concerns (Parse Server's _onAfterSave/_onAfterDelete),
   * each as its session allows now: an event waits for a session read only when its token was not
   * read within SESSION_RECHECK_MS, and a client's events keep their order.
   */
  private publish(appId: string, store: DataStore, change: ObjectChange): void {
    const clients = this.clients.get(appId);
    if (!clients?.size) return;
    const engine = checkingFace(store);
    const { className } = change;
    const objectRow = change.kind === 'save' ? change.object : undefined;
    const registry = this.cloud.registryNow(appId);
    const context: Published = {
      appId,
      engine,
      change,
      object: objectRow && { ...engine.toJson(className, objectRow), className },
      original: change.original && { ...engine.toJson(className, change.original), className },
      // Cloud code's afterLiveQueryEvent sees the whole object and may change or withhold it.
      registry: registry !== undefined && hasTrigger(registry, className, 'afterLiveQueryEvent') ? registry : undefined,
    };
    for (const client of clients) {
      for (const [requestId, sub] of client.subscriptions) {
        if (sub.className !== className) continue;
        const auth = sub.token ? this.sessions.auth(store, sub.token, sub.auth.installationId) : sub.auth;
        if (!context.registry && client.pending === 0 && !(auth instanceof Promise)) {
          const event = this.eventOf(context, client, requestId, sub, auth) as Json | undefined;
          if (event) send(client.socket, event);
          continue;
        }
        const decided = Promise.resolve(auth).then(
          (known) => this.eventOf(context, client, requestId, sub, known),
          (error: unknown) => void this.refused(appId, sub, error),
        );
        client.pending++;
        client.queue = client.queue
          .then(async () => {
            const event = await decided;
            // Not after an unsubscribe, or after its session ended meanwhile.
            if (event && client.subscriptions.get(requestId) === sub) send(client.socket, event);
          })
          .catch((err: unknown) => this.log.warn({ err }, 'LiveQuery could not send an event'))
          .finally(() => client.pending--);
      }
    }
  }

  /**
   * The event a change makes for one subscription with `auth` (none when the subscriber may not read
   * the object, or the change does not concern its query or watched fields): at once, or once cloud
   * code's afterLiveQueryEvent has decided.
   */
  private eventOf(context: Published, client: Client, requestId: number, sub: Subscription, auth: Auth): Json | undefined | Promise<Json | undefined> {
    const { engine, change, object, original } = context;
    const { className } = change;
    if (!engine.allows(className, 'find', auth)) return undefined;
    const before = original !== undefined && readable(change.original, auth) && matchesWhere(original, sub.where);
    const after = object !== undefined && change.kind === 'save' && readable(change.object, auth) && matchesWhere(object, sub.where);
    let op: string | undefined;
    if (change.kind === 'delete') op = before ? 'delete' : undefined;
    else if (before && after) op = sub.watch && !sub.watch.some((f) => JSON.stringify(object![f]) !== JSON.stringify(original![f])) ? undefined : 'update';
    else if (before) op = 'leave';
    else if (after) op = original ? 'enter' : 'create';
    if (!op) return undefined;
    const shown = (json: Json) => select(engine.protect(className, json, auth), sub.keys);
    const whole = op === 'delete' ? original! : op === 'leave' ? object ?? original! : object!;
    const withOriginal = op === 'update' || op === 'enter' || op === 'leave';
    const event = (sent: Json): Json => ({ op, clientId: client.id, requestId, object: shown(sent), ...(withOriginal ? { original: shown(original!) } : {}) });
    if (!context.registry) return event(whole);
    return afterLiveQueryEvent({ cloud: this.cloud, registry: context.registry, engine, auth }, className, {
      event: op,
      object: whole,
      ...(withOriginal ? { original } : {}),
      ...this.counts(context.appId),
    }).then(({ send: sending, object: changed }) => (sending ? event(changed) : undefined));
  }

  /** An event's session check failed: a 209 ends the session's subscriptions; other trouble skips the event. */
  private refused(appId: string, sub: Subscription, error: unknown): void {
    if (error instanceof ParseError && error.code === ParseCode.INVALID_SESSION_TOKEN && sub.token) this.endSession(appId, sub.token);
    else this.log.warn({ err: error, app: appId }, 'LiveQuery could not check a subscriber\'s session; the event was not sent to it');
  }
}

/** A committed change as publish() prepared it for its subscriptions. */
interface Published {
  appId: string;
  engine: DataEngine;
  change: ObjectChange;
  /** The object after a save, in API form with its className. */
  object: Json | undefined;
  /** The object before an update or a delete, likewise. */
  original: Json | undefined;
  /** The app's cloud code when it has an afterLiveQueryEvent for the class. */
  registry: CloudRegistry | undefined;
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

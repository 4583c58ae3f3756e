/*
 * The cloud code worker: one process per Backend App, started by `runtime.ts` under Node's permission
 * model (it may read only this file, node_modules and the app's cloud folder). It loads the Parse JS
 * SDK as the global `Parse` (also `Backend`), pointed at the app's own data API with its master key,
 * adds Parse Server's cloud code API (`Parse.Cloud.define`, `job`, the triggers, `httpRequest`),
 * requires the app's `cloud/main.js`, reports what it registered, then answers calls over IPC.
 * Console output written during a call (also from its timers and awaits, which AsyncLocalStorage
 * follows) is sent to the parent as that call's log lines; the rest goes to stdout/stderr only.
 * CommonJS on purpose: the user's files are CommonJS and are loaded with `require`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */

interface WorkerConfig {
  applicationId: string;
  javascriptKey: string;
  masterKey: string;
  serverURL: string;
  mainFile: string;
  /** Bounds of what is sent per call (the parent bounds again: this process runs the app's code). */
  logLimits: { lines: number; chars: number };
  /** Set when this worker runs in the sandbox (sandbox.ts): the Unix sockets that are its only way out. */
  sandbox?: { dataSocket: string; egressSocket?: string };
}

type Handler = (request: any) => unknown;

const config = JSON.parse(process.env.BACKYARD_WORKER_CONFIG ?? '{}') as WorkerConfig;
delete process.env.BACKYARD_WORKER_CONFIG;

if (config.sandbox) routeFetch(config.sandbox);

/**
 * In the sandbox there is no network but the bound Unix sockets: `fetch` (the Parse SDK's transport,
 * `Parse.Cloud.httpRequest` and the app's own calls) goes to the data API socket for the app's
 * serverURL, and through the egress proxy's CONNECT tunnels for everything else; so do Node's
 * `http` and `https` clients (`routeNodeClients`).
 */
function routeFetch(sockets: { dataSocket: string; egressSocket?: string }): void {
  const undici = require('undici') as typeof import('undici');
  const net = require('node:net') as typeof import('node:net');
  const tls = require('node:tls') as typeof import('node:tls');
  const dataOrigin = new URL(config.serverURL).origin;
  const data = new undici.Agent({ connect: { socketPath: sockets.dataSocket } });
  const tunnel = (options: { hostname: string; port: string; protocol: string; servername?: string | null }, callback: (error: Error | null, socket: any) => void) => {
    const port = options.port || (options.protocol === 'https:' ? '443' : '80');
    const host = options.hostname.includes(':') && !options.hostname.startsWith('[') ? `[${options.hostname}]` : options.hostname;
    const target = `${host}:${port}`;
    const socket = net.connect(sockets.egressSocket!);
    let answer = '';
    const fail = (error: Error) => {
      socket.destroy();
      callback(error, null);
    };
    socket.once('error', fail);
    socket.once('connect', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    const onData = (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.off('error', fail);
      const status = /^HTTP\/1\.\d (\d{3})/.exec(answer)?.[1];
      if (status !== '200') return fail(new Error(`Backyard refused the connection to ${target}: ${answer.slice(end + 4).trim() || `status ${status}`}`));
      if (options.protocol !== 'https:') return callback(null, socket);
      const secure = tls.connect({ socket, servername: options.servername || options.hostname.replace(/^\[|\]$/g, ''), ALPNProtocols: ['http/1.1'] });
      secure.once('secureConnect', () => callback(null, secure));
      secure.once('error', (error) => callback(error, null));
    };
    socket.on('data', onData);
  };
  const egress = sockets.egressSocket ? new undici.Agent({ connect: tunnel as any }) : undefined;
  routeNodeClients(sockets, dataOrigin, tunnel);
  const fetchThrough = undici.fetch;
  (globalThis as any).fetch = (input: any, init?: any) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const dispatcher = url.origin === dataOrigin ? data : egress;
    if (!dispatcher) {
      return Promise.reject(new TypeError(`fetch ${url.origin}: cloud code has no network access here (BACKYARD_CLOUD_NETWORK=none); it can reach only its app's data API.`));
    }
    return fetchThrough(input, { ...init, dispatcher });
  };
}

/**
 * Node's own clients, `http.request` and `https.request` (so `get`, and axios, node-fetch, stripe and
 * the rest built on them), take the same ways out as `fetch`: every Agent's connections, the global
 * ones and those libraries make, open through the egress proxy's CONNECT tunnel (TLS then runs inside
 * it, with the request's own TLS options), or to the data API socket for the app's serverURL. The
 * proxy applies its rules to them as to fetch.
 */
function routeNodeClients(
  sockets: { dataSocket: string; egressSocket?: string },
  dataOrigin: string,
  tunnel: (options: { hostname: string; port: string; protocol: string }, callback: (error: Error | null, socket: any) => void) => void,
): void {
  const http = require('node:http') as typeof import('node:http');
  const https = require('node:https') as typeof import('node:https');
  const net = require('node:net') as typeof import('node:net');
  const data = new URL(dataOrigin);
  const route = (protocol: 'http:' | 'https:', secure: (options: any, socket: any) => any) =>
    function createConnection(this: unknown, options: any, callback?: (error: Error | null, socket?: any) => void): any {
      // A request to a Unix socket of its own (`socketPath`) is no network request: Node's own way.
      if (options?.socketPath) return secure.call(this, options, undefined);
      const hostname = String(options?.hostname ?? options?.host ?? 'localhost');
      const port = String(options?.port ?? (protocol === 'https:' ? 443 : 80));
      if (protocol === 'http:' && hostname === data.hostname && port === (data.port || '80')) return net.connect(sockets.dataSocket);
      const done = callback ?? (() => undefined);
      if (!sockets.egressSocket) {
        const error = new Error(`${protocol}//${hostname}:${port}: cloud code has no network access here (BACKYARD_CLOUD_NETWORK=none); it can reach only its app's data API.`);
        process.nextTick(() => done(error));
        return undefined;
      }
      tunnel({ hostname, port, protocol: 'http:' }, (error, socket) => {
        if (error) return done(error);
        done(null, secure.call(this, options, socket));
      });
      return undefined;
    };
  http.Agent.prototype.createConnection = route('http:', (options, socket) => socket ?? net.createConnection(options));
  const tlsConnection = https.Agent.prototype.createConnection as (options: any) => any;
  // https.Agent's own createConnection makes the TLS socket (session cache, servername, ca, ...); given `socket`, over the tunnel.
  https.Agent.prototype.createConnection = route('https:', function (this: unknown, options, socket) {
    return tlsConnection.call(this, socket ? { ...options, socket } : options);
  });
}

const Parse: any = require('parse/node');
Parse.initialize(config.applicationId, config.javascriptKey, config.masterKey);
Parse.serverURL = config.serverURL;
// A failed call from cloud code should fail at once, not be retried five times.
Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);

const functions = new Map<string, Handler>();
const jobs = new Map<string, Handler>();
const triggers = new Map<string, Handler>(); // `${trigger}:${className}`

const TRIGGERS = ['beforeSave', 'afterSave', 'beforeDelete', 'afterDelete', 'beforeFind', 'afterFind', 'beforeLogin', 'afterLogin', 'beforeSubscribe', 'afterLiveQueryEvent'] as const;

/** The pseudo class LiveQuery's connection events are registered under (`Parse.Cloud.onLiveQueryEvent` takes no class). */
const LIVE_QUERY = '@LiveQuery';

/** Parse Server accepts a class name, a Parse.Object subclass or an instance for the trigger's class. */
function classNameOf(target: unknown): string {
  if (typeof target === 'string') return target === 'Parse.User' || target === 'User' ? '_User' : target;
  if (typeof target === 'function' && (target as any).className) return (target as any).className;
  if (target && typeof target === 'object' && (target as any).className) return (target as any).className;
  throw new TypeError('A trigger needs a class name or a Parse.Object subclass.');
}

function requireHandler(name: unknown, handler: unknown, what: string): asserts handler is Handler {
  if (typeof name !== 'string' || name === '') throw new TypeError(`Parse.Cloud.${what} needs a name.`);
  if (typeof handler !== 'function') throw new TypeError(`Parse.Cloud.${what}("${name}") needs a function.`);
}

const cloud = Parse.Cloud ?? {};
cloud.define = (name: string, handler: Handler) => {
  requireHandler(name, handler, 'define');
  functions.set(name, handler);
};
cloud.job = (name: string, handler: Handler) => {
  requireHandler(name, handler, 'job');
  jobs.set(name, handler);
};
for (const trigger of TRIGGERS) {
  cloud[trigger] = (target: unknown, handler: Handler) => {
    // beforeLogin/afterLogin take only the handler.
    if (typeof target === 'function' && handler === undefined && (trigger === 'beforeLogin' || trigger === 'afterLogin')) {
      triggers.set(`${trigger}:_User`, target as Handler);
      return;
    }
    const className = classNameOf(target);
    requireHandler(className, handler, trigger);
    triggers.set(`${trigger}:${className}`, handler);
  };
}

cloud.onLiveQueryEvent = (handler: Handler) => {
  if (typeof handler !== 'function') throw new TypeError('Parse.Cloud.onLiveQueryEvent needs a function.');
  triggers.set(`onLiveQueryEvent:${LIVE_QUERY}`, handler);
};

/** `Parse.Cloud.httpRequest` (Parse Server's API) on Node's fetch. Rejects with the response on a non-2xx status. */
cloud.httpRequest = async (options: any) => {
  if (!options || typeof options.url !== 'string') throw new TypeError('httpRequest needs a url.');
  const url = new URL(options.url);
  for (const [k, v] of Object.entries(options.params ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body = options.body;
  if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    const type = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? 'application/json';
    headers['Content-Type'] = type;
    body = type.includes('x-www-form-urlencoded') ? new URLSearchParams(body).toString() : JSON.stringify(body);
  }
  const res = await fetch(url, { method: options.method ?? 'GET', headers, body, redirect: options.followRedirects === false ? 'manual' : 'follow' });
  const buffer = Buffer.from(await res.arrayBuffer());
  const text = buffer.toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const response = { status: res.status, headers: Object.fromEntries(res.headers), buffer, text, data };
  if (res.status < 200 || res.status >= 300) throw response;
  return response;
};
Parse.Cloud = cloud;
(globalThis as any).Parse = Parse;
(globalThis as any).Backend = Parse;

const send = (message: unknown) => process.send?.(message);

/** The call a piece of code runs for. */
interface CallScope {
  id: number;
  sent: number;
  omitted: number;
}
const { AsyncLocalStorage } = require('node:async_hooks') as typeof import('node:async_hooks');
const { format } = require('node:util') as typeof import('node:util');
const scope = new AsyncLocalStorage<CallScope>();

/** Sends a line to the parent as the current call's, if code runs for a call. */
function capture(level: string, args: unknown[]): void {
  const call = scope.getStore();
  if (!call) return;
  if (call.sent >= config.logLimits.lines) {
    call.omitted++;
    return;
  }
  call.sent++;
  let message = format(...args);
  if (message.length > config.logLimits.chars) message = `${message.slice(0, config.logLimits.chars - 1)}…`;
  send({ type: 'log', id: call.id, level, message, time: new Date().toISOString() });
}

// The originals still write to stdout/stderr, which the parent copies into its log as before.
const original = { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug };
for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  console[level] = (...args: unknown[]) => {
    capture(level, args);
    original[level].apply(console, args);
  };
}

const log = (level: string) => (...args: unknown[]) => {
  capture(level, args);
  original.error.call(console, `[${level}]`, ...args);
};
const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };

function userOf(json: any): any {
  return json ? Parse.Object.fromJSON({ className: '_User', ...json }) : undefined;
}

function objectOf(className: string, json: any): any {
  return json ? Parse.Object.fromJSON({ className, ...json }, true) : undefined;
}

/** A result as Parse Server answers it: Parse objects in full JSON with `__type: "Object"`. */
const encode = (value: unknown) => (value === undefined ? null : Parse._encode(value, false, false, []));

function errorOf(error: unknown): { code: number; message: string } {
  if (error instanceof Parse.Error) return { code: (error as any).code, message: (error as any).message };
  if (error instanceof Error) return { code: 141, message: error.message };
  if (typeof error === 'string') return { code: 141, message: error };
  if (error && typeof error === 'object' && 'message' in error) return { code: Number((error as any).code) || 141, message: String((error as any).message) };
  return { code: 141, message: JSON.stringify(error) ?? 'Script failed.' };
}

async function runFunction(name: string, r: any): Promise<unknown> {
  const handler = functions.get(name);
  if (!handler) throw new Parse.Error(141, `Invalid function: "${name}"`);
  const request = { params: r.params ?? {}, user: userOf(r.user), master: r.master, installationId: r.installationId, functionName: name, log: logger, context: {} };
  return encode(await handler(request));
}

async function runJob(name: string, r: any): Promise<unknown> {
  const handler = jobs.get(name);
  if (!handler) throw new Parse.Error(141, `Invalid job: "${name}"`);
  const request = {
    params: r.params ?? {},
    jobName: name,
    jobId: r.jobId,
    log: logger,
    message: (text: unknown) => send({ type: 'jobMessage', jobId: r.jobId, message: String(text) }),
  };
  return encode(await handler(request));
}

async function runTrigger(trigger: string, r: any): Promise<unknown> {
  const handler = triggers.get(`${trigger}:${r.className}`);
  if (!handler) return {};
  const request: any = { triggerName: trigger, user: userOf(r.user), master: r.master, installationId: r.installationId, log: logger, context: r.context ?? {}, headers: {} };
  switch (trigger) {
    case 'beforeSave': {
      // The object as it will be saved; the trigger's changes come back as a REST body.
      const object = objectOf(r.className, r.object);
      request.object = object;
      request.original = objectOf(r.className, r.original);
      await handler(request);
      return { changes: object._getSaveJSON() };
    }
    case 'afterSave':
    case 'beforeDelete':
    case 'afterDelete':
    case 'beforeLogin':
    case 'afterLogin':
      request.object = objectOf(r.className, r.object);
      request.original = objectOf(r.className, r.original);
      await handler(request);
      return {};
    case 'beforeFind': {
      const query = Parse.Query.fromJSON(r.className, r.query ?? {});
      request.query = query;
      request.count = r.count === true;
      request.isGet = r.isGet === true;
      const returned = await handler(request);
      const final = returned instanceof Parse.Query ? returned : query;
      return { query: final.toJSON() };
    }
    case 'beforeSubscribe': {
      // LiveQuery: the trigger may refuse (throw) or change the subscription's query.
      const query = Parse.Query.fromJSON(r.className, r.query ?? {});
      request.query = query;
      await handler(request);
      return { query: request.query.toJSON() };
    }
    case 'afterLiveQueryEvent': {
      // One event to one subscriber: the trigger may change the object sent, or not send it (sendEvent = false).
      request.event = r.event;
      request.object = objectOf(r.className, r.object);
      request.original = r.original ? objectOf(r.className, r.original) : undefined;
      request.clients = r.clients;
      request.subscriptions = r.subscriptions;
      request.sendEvent = true;
      await handler(request);
      const object = request.object instanceof Parse.Object ? request.object._toFullJSON([]) : request.object;
      return { sendEvent: request.sendEvent !== false, object };
    }
    case 'onLiveQueryEvent': {
      await handler({ event: r.event, clients: r.clients, subscriptions: r.subscriptions, sessionToken: r.sessionToken, useMasterKey: r.master, installationId: r.installationId, error: r.error });
      return {};
    }
    case 'afterFind': {
      request.objects = (r.objects ?? []).map((o: any) => objectOf(r.className, o));
      const returned = await handler(request);
      const objects = Array.isArray(returned) ? returned : request.objects;
      return { objects: objects.map((o: any) => (o instanceof Parse.Object ? o._toFullJSON([]) : o)) };
    }
    default:
      throw new Parse.Error(141, `Unknown trigger ${trigger}.`);
  }
}

process.on('message', (message: any) => {
  // The parent's check that this event loop is free (runtime.ts sends calls elsewhere while it is not).
  if (message?.type === 'ping') return void send({ type: 'pong' });
  const { id, kind, name, request } = message ?? {};
  const call: CallScope = { id, sent: 0, omitted: 0 };
  void scope.run(call, async () => {
    try {
      const result = kind === 'function' ? await runFunction(name, request) : kind === 'job' ? await runJob(name, request) : await runTrigger(name, request);
      send({ type: 'result', id, result, omittedLines: call.omitted });
    } catch (error) {
      send({ type: 'result', id, error: errorOf(error), omittedLines: call.omitted });
    }
  });
});

// Cloud files that require the SDK although it is a global (the deploy warns) get this same instance.
const Module = require('node:module');
const resolveFilename = Module._resolveFilename;
const sdkPath = require.resolve('parse/node');
Module._resolveFilename = function (request: string, ...rest: unknown[]) {
  if (request === 'parse' || request === 'parse/node' || request === 'parse/node.js') return sdkPath;
  return resolveFilename.call(this, request, ...rest);
};

// import() loads CommonJS and, with --experimental-detect-module, files written with import/export.
import(require('node:url').pathToFileURL(config.mainFile).href).then(
  () => {
    const registered: Record<string, string[]> = {};
    for (const key of triggers.keys()) {
      const [trigger, className] = key.split(':') as [string, string];
      (registered[className] ??= []).push(trigger);
    }
    send({ type: 'ready', registry: { functions: [...functions.keys()], jobs: [...jobs.keys()], triggers: registered } });
  },
  (error: unknown) => send({ type: 'loadError', message: loadErrorText(error) }),
);

/**
 * What threw while the app's code loaded, with where: `cloud/todo/functions/x.js:3:9: Error: bad start`
 * (the first stack frame in the app's own tree, relative to it), so that the deploy names the file.
 */
function loadErrorText(error: unknown): string {
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const treeRoot = require('node:path').dirname(require('node:path').dirname(config.mainFile)) + '/';
  for (const match of stack.matchAll(/(?:file:\/\/)?(\/[^\s():]+):(\d+):(\d+)/g)) {
    const file = decodeURIComponent(match[1]!);
    if (file.startsWith(treeRoot)) return `${file.slice(treeRoot.length)}:${match[2]}:${match[3]}: ${what}`;
  }
  // A syntax error in a file that main.js imports names the file on the stack's first line.
  const first = /^(\/[^\s:]+):(\d+)/m.exec(stack);
  if (first && first[1]!.startsWith(treeRoot)) return `${first[1]!.slice(treeRoot.length)}:${first[2]}: ${what}`;
  return what;
}

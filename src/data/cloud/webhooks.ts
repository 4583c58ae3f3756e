import fs from 'node:fs/promises';
import path from 'node:path';
import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';
import type { CloudRegistry, CloudRuntime, TriggerName } from './types.js';
import type { OutboundFetch } from '../../shared/outbound/client.js';
import { OutboundError } from '../../shared/outbound/errors.js';

/**
 * Webhooks (Parse Server's HooksController and the REST guide's "Hooks"): cloud functions
 * and triggers served by an outside URL instead of the app's cloud code. Each app's list is kept by a
 * `WebhookLists` (`apps/<appId>/hooks.json` on SQLite homes, the platform store on PostgreSQL, which
 * every node reads), and a call is a
 * POST of Parse Server's JSON request with the app's webhook key in `X-Parse-Webhook-Key`, answered
 * `{"success": result}` or `{"error": ...}`.
 */

/** The largest answer read from a webhook: what the data API takes in a request (rest/handler.ts, DATA_BODY_LIMIT). */
const MAX_ANSWER_BYTES = 20 * 1024 * 1024;

/** A function webhook, or a trigger webhook (as `/hooks` answers them). */
export type Webhook = { functionName: string; url: string } | { className: string; triggerName: TriggerName; url: string };

/** The triggers a webhook may serve (Parse Server's `triggers.Types` that Backyard runs). */
export const WEBHOOK_TRIGGERS: readonly TriggerName[] = ['beforeSave', 'afterSave', 'beforeDelete', 'afterDelete', 'beforeFind', 'afterFind', 'beforeLogin', 'afterLogin'];

/** How long a process answers an app's webhooks from memory before reading the file again (another process may have changed it). */
export const WEBHOOKS_RECHECK_MS = 1000;

interface AppHooks {
  functions: Map<string, string>;
  /** `<className>.<triggerName>` → url. */
  triggers: Map<string, string>;
  readAt: number;
}

const triggerKey = (className: string, triggerName: string) => `${className}.${triggerName}`;

/**
 * Where each app's list of webhooks is kept, whole: read and replaced as one value, so that a reader
 * never sees half of a change.
 */
export interface WebhookLists {
  /** The app's list as last written; [] when none was. @throws what the storage throws. */
  read(appId: string): Promise<Webhook[]>;
  /** Replaces the app's list. @throws what the storage throws (nothing is changed then). */
  write(appId: string, list: Webhook[]): Promise<void>;
}

/** The lists in files, `apps/<appId>/hooks.json`, replaced whole by a rename (homes on SQLite). */
export function webhookFiles(appFolder: (appId: string) => string): WebhookLists {
  const file = (appId: string) => path.join(appFolder(appId), 'hooks.json');
  return {
    async read(appId) {
      try {
        return JSON.parse(await fs.readFile(file(appId), 'utf8')) as Webhook[];
      } catch {
        return []; // none yet
      }
    },
    async write(appId, list) {
      await fs.mkdir(appFolder(appId), { recursive: true });
      const temporary = `${file(appId)}.${process.pid}.tmp`;
      await fs.writeFile(temporary, JSON.stringify(list, null, 2));
      await fs.rename(temporary, file(appId));
    },
  };
}

/** Reads and writes the webhooks of apps (the `/hooks` endpoints). */
export class WebhookStore {
  private readonly cache = new Map<string, AppHooks>();

  constructor(private readonly lists: WebhookLists) {}

  /** The app's webhooks, from memory when read in the last WEBHOOKS_RECHECK_MS. */
  async hooks(appId: string): Promise<AppHooks> {
    const known = this.cache.get(appId);
    if (known && Date.now() - known.readAt < WEBHOOKS_RECHECK_MS) return known;
    return this.read(appId);
  }

  /**
   * The app's webhooks as last read, without waiting: when that was more than WEBHOOKS_RECHECK_MS
   * ago they are read again in the background (the next call sees the result); undefined before the
   * first read (call `hooks`).
   */
  hooksNow(appId: string): AppHooks | undefined {
    const known = this.cache.get(appId);
    if (known && Date.now() - known.readAt >= WEBHOOKS_RECHECK_MS && !this.refreshing.has(appId)) {
      this.refreshing.add(appId);
      void this.read(appId).finally(() => this.refreshing.delete(appId));
    }
    return known;
  }

  private readonly refreshing = new Set<string>();

  private async read(appId: string): Promise<AppHooks> {
    const list = await this.lists.read(appId);
    const hooks: AppHooks = { functions: new Map(), triggers: new Map(), readAt: Date.now() };
    for (const hook of list) {
      if ('functionName' in hook) hooks.functions.set(hook.functionName, hook.url);
      else hooks.triggers.set(triggerKey(hook.className, hook.triggerName), hook.url);
    }
    this.cache.set(appId, hooks);
    return hooks;
  }

  /** Every webhook of the app, functions first, in name order. */
  async list(appId: string): Promise<Webhook[]> {
    const hooks = await this.read(appId);
    return [
      ...[...hooks.functions].sort().map(([functionName, url]) => ({ functionName, url })),
      ...[...hooks.triggers].sort().map(([key, url]) => {
        const dot = key.lastIndexOf('.');
        return { className: key.slice(0, dot), triggerName: key.slice(dot + 1) as TriggerName, url };
      }),
    ];
  }

  private readonly writing = new Map<string, Promise<unknown>>();

  /**
   * Replaces the app's webhooks with `change` applied to them: one change at a time per app in this
   * process, the list replaced whole, so a reader never sees half of it.
   * @returns what `change` returned besides the list.
   */
  change<T>(appId: string, change: (list: Webhook[]) => { list: Webhook[]; result: T }): Promise<T> {
    const previous = this.writing.get(appId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.write(appId, change));
    this.writing.set(appId, next);
    return next;
  }

  private async write<T>(appId: string, change: (list: Webhook[]) => { list: Webhook[]; result: T }): Promise<T> {
    const { list: next, result } = change(await this.list(appId));
    await this.lists.write(appId, next);
    this.cache.delete(appId);
    return result;
  }

  /** Forgets what is in memory of an app (deleted). */
  forget(appId: string): void {
    this.cache.delete(appId);
  }
}

/**
 * The apps' cloud code with their webhooks in front (CloudRuntime): a function or trigger with a
 * webhook is called at its URL, anything else runs in the app's worker; the registry lists both.
 */
export class WebhookCloudRuntime implements CloudRuntime {
  constructor(
    private readonly inner: CloudRuntime,
    readonly store: WebhookStore,
    private readonly options: {
      /** How webhook URLs are fetched (public addresses only, shared/outbound/client.ts). */
      fetch: OutboundFetch;
      /** The app's webhook key, sent in `X-Parse-Webhook-Key`. */
      webhookKey: (appId: string) => Promise<string | undefined>;
      /** How long a webhook may take, as a cloud function (BACKYARD_FUNCTION_TIMEOUT_MS). */
      timeoutMs: number;
    },
  ) {}

  private merge(registry: CloudRegistry, hooks: AppHooks): CloudRegistry {
    if (hooks.functions.size === 0 && hooks.triggers.size === 0) return registry;
    // Without a prototype: a class may be named `constructor` or `valueOf`.
    const triggers: Record<string, TriggerName[]> = Object.assign(Object.create(null) as Record<string, TriggerName[]>, Object.fromEntries(Object.entries(registry.triggers).map(([c, t]) => [c, [...t]])));
    for (const key of hooks.triggers.keys()) {
      const dot = key.lastIndexOf('.');
      const className = key.slice(0, dot);
      const name = key.slice(dot + 1) as TriggerName;
      (triggers[className] ??= []).includes(name) || triggers[className]!.push(name);
    }
    return { ...registry, functions: [...new Set([...registry.functions, ...hooks.functions.keys()])], triggers };
  }

  async registry(appId: string): Promise<CloudRegistry> {
    const [registry, hooks] = await Promise.all([this.inner.registry(appId), this.store.hooks(appId)]);
    return this.merge(registry, hooks);
  }

  registryNow(appId: string): CloudRegistry | undefined {
    const registry = this.inner.registryNow(appId);
    const hooks = this.store.hooksNow(appId);
    return registry && hooks ? this.merge(registry, hooks) : undefined;
  }

  async run(appId: string, kind: 'function' | 'trigger' | 'job', name: string, request: Record<string, unknown>): Promise<unknown> {
    if (kind !== 'job') {
      const hooks = await this.store.hooks(appId);
      const url = kind === 'function' ? hooks.functions.get(name) : hooks.triggers.get(triggerKey(String(request.className), name));
      if (url) return this.call(appId, url, kind, name, request);
    }
    return this.inner.run(appId, kind, name, request);
  }

  /**
   * POSTs a call to a webhook and reads its answer (Parse Server's `wrapToHTTPRequest`).
   * @throws ParseError 141 naming the URL when it cannot be reached, does not answer in time or
   *   answers no JSON; the webhook's `{"error": ...}` as a ParseError (its `code`, else 141).
   */
  private async call(appId: string, url: string, kind: 'function' | 'trigger', name: string, request: Record<string, unknown>): Promise<unknown> {
    const body: Record<string, unknown> = { ...request };
    if (kind === 'function') body.functionName = name;
    else {
      body.triggerName = name;
      for (const key of ['object', 'original'] as const) if (isPlainObject(body[key])) body[key] = { ...(body[key] as object), className: request.className };
    }
    const key = await this.options.webhookKey(appId);
    const where = `The webhook of ${kind === 'function' ? `function ${name}` : `${name} on ${String(request.className)}`} at ${url}`;
    // A webhook answers where it is registered: a redirect is refused (Parse Server's lib/request.js follows none unless asked).
    const init = { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'x-parse-webhook-key': key } : {}) }, body: JSON.stringify(body), redirect: 'error', timeoutMs: this.options.timeoutMs, maxBytes: MAX_ANSWER_BYTES } as const;
    let response: Response;
    let text: string;
    try {
      response = await this.options.fetch(url, init);
      text = await response.text();
    } catch (error) {
      const reason = error instanceof OutboundError ? error.reason : 'unreachable';
      const why = reason === 'timeout' ? `did not answer within ${this.options.timeoutMs} ms` : reason === 'too-large' ? `answered more than ${MAX_ANSWER_BYTES} bytes` : `could not be reached (${(error as Error).message})`;
      throw new ParseError(ParseCode.SCRIPT_FAILED, `${where} ${why}.`);
    }
    let answer: unknown;
    try {
      answer = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new ParseError(ParseCode.SCRIPT_FAILED, `Malformed response from the webhook at ${url} (HTTP ${response.status}): ${text.slice(0, 100)}`);
    }
    const { success, error } = isPlainObject(answer) ? answer : { success: undefined, error: undefined };
    if (error !== undefined && error !== null) {
      if (isPlainObject(error)) {
        const code = typeof error.code === 'number' ? error.code : ParseCode.SCRIPT_FAILED;
        throw new ParseError(code, String(error.error ?? error.message ?? JSON.stringify(error)));
      }
      throw new ParseError(ParseCode.SCRIPT_FAILED, typeof error === 'string' ? error : JSON.stringify(error));
    }
    if (kind === 'function') return success;
    // The answer shapes hooks.ts reads, from Parse Server's webhook answers. A beforeSave webhook's
    // object is the object to save, not changes to merge (Parse Server's `wrapToHTTPRequest`
    // answers `{object}`, and RestWrite.runBeforeSaveTrigger sets `this.data = response.object`).
    if (name === 'beforeSave' && isPlainObject(success)) {
      const { createdAt: _c, updatedAt: _u, className: _n, ...object } = success;
      return { object };
    }
    if (name === 'afterFind' && Array.isArray(success)) return { objects: success };
    if (name === 'beforeFind' && isPlainObject(success)) return { query: success };
    return undefined;
  }

  reload = (appId: string) => this.inner.reload(appId);
  recentRuns = (appId: string) => this.inner.recentRuns(appId);
  liveWorkers = (appId: string) => this.inner.liveWorkers(appId);
  confinement = () => this.inner.confinement();
  forget = (appId: string) => {
    this.store.forget(appId);
    return this.inner.forget(appId);
  };
  attachDataApi: CloudRuntime['attachDataApi'] = (handler) => this.inner.attachDataApi(handler);
  close = () => this.inner.close();
}

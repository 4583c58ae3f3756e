import { createHash } from 'node:crypto';
import type { Logger } from '../../log.js';
import type { OutboundClient } from '../../shared/outbound/client.js';
import { MASTER } from '../auth/context.js';
import type { DataEngine } from '../engine.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import { isPlainObject } from '../values.js';
import { ApnsSender } from './apns.js';
import { FcmSender } from './fcm.js';
import type { PushSettings } from './options.js';
import type { Delivery } from './types.js';
import { WebPushSender } from './webPush.js';

/**
 * Push (Parse REST guide, "Push Notifications"; Parse Server 9's PushController and PushQueue):
 * `POST /push` with the master key records a `_PushStatus`, answers at once, and delivers in the
 * background to the installations its `where` or `channels` select, through the app's `push`
 * setting: APNs for `ios`/`osx`/`tvos`, FCM for `android`, Web Push for `web`. The status ends
 * `succeeded` with `numSent`, `numFailed`, the counts per device type and, for failures, what each
 * service answered; or `failed` when nothing could be tried.
 */

const push115 = (message: string) => new ParseError(ParseCode.PUSH_MISCONFIGURED, message);
const APPLE = new Set(['ios', 'osx', 'tvos']);
const PAGE = 1000;

/** A `POST /push` body once checked. */
export interface PushRequest {
  where: Record<string, unknown>;
  data: Record<string, unknown>;
  pushTime: string;
  /** Milliseconds since 1970 after which the notification is not worth delivering. */
  expiry?: number;
  expirationInterval?: number;
}

/**
 * Checks a push request as Parse Server's PushRouter does.
 * @throws ParseError 115 (channels and where together, or neither; no data), 107 (bad types).
 */
export function readPushRequest(body: unknown): PushRequest {
  if (!isPlainObject(body)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object.');
  const { where, channels, data } = body;
  if (channels !== undefined && where !== undefined) throw push115('Channels and query can not be set at the same time.');
  if (channels === undefined && where === undefined) throw push115('Sending a push requires either "channels" or a "where" query.');
  if (channels !== undefined && (!Array.isArray(channels) || !channels.every((c) => typeof c === 'string'))) throw new ParseError(ParseCode.INVALID_JSON, 'channels must be a list of channel names.');
  if (where !== undefined && !isPlainObject(where)) throw new ParseError(ParseCode.INVALID_JSON, 'where must be a query object, such as {"deviceType": "ios"}.');
  if (!isPlainObject(data)) throw push115('A push needs data, such as {"alert": "Hello"}.');
  const request: PushRequest = {
    where: channels !== undefined ? { channels: { $in: channels } } : (where as Record<string, unknown>),
    data,
    pushTime: new Date().toISOString(),
  };
  if (body.expiration_time !== undefined) {
    const at = typeof body.expiration_time === 'number' ? body.expiration_time * 1000 : Date.parse(String(body.expiration_time));
    if (!Number.isFinite(at)) throw push115(`expiration_time is not a date: ${JSON.stringify(body.expiration_time)}`);
    request.expiry = at;
  }
  if (body.expiration_interval !== undefined) {
    if (typeof body.expiration_interval !== 'number' || body.expiration_interval <= 0) throw push115('expiration_interval must be a number of seconds above 0.');
    request.expirationInterval = body.expiration_interval;
    request.expiry = Date.now() + body.expiration_interval * 1000;
  }
  return request;
}

/** The APNs payload of Parse push data (Parse's `alert`, `badge`, `sound`, `content-available`, `category`, `title`...). */
function applePayload(data: Record<string, unknown>, badge: number | undefined): Record<string, unknown> {
  const { alert, badge: _b, sound, 'content-available': contentAvailable, 'mutable-content': mutable, category, title, 'thread-id': thread, ...custom } = data;
  const aps: Record<string, unknown> = {};
  if (alert !== undefined) aps.alert = title !== undefined ? { title, body: alert } : alert;
  if (badge !== undefined) aps.badge = badge;
  if (sound !== undefined) aps.sound = sound;
  if (contentAvailable !== undefined) aps['content-available'] = contentAvailable;
  if (mutable !== undefined) aps['mutable-content'] = mutable;
  if (category !== undefined) aps.category = category;
  if (thread !== undefined) aps['thread-id'] = thread;
  return { ...custom, aps };
}

/** The FCM v1 message of Parse push data: a notification for `title`/`alert`, every field as data (FCM data values are strings). */
function fcmMessage(data: Record<string, unknown>): Record<string, unknown> {
  const strings = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const notification = data.alert !== undefined || data.title !== undefined ? { ...(data.title !== undefined ? { title: String(data.title) } : {}), ...(data.alert !== undefined ? { body: String(data.alert) } : {}) } : undefined;
  return { data: strings, ...(notification ? { notification } : {}) };
}

/**
 * Records a push and starts its delivery in the background.
 * @returns the `_PushStatus` objectId (answered in `X-Parse-Push-Status-Id`).
 * @throws ParseError 115 when the app has no `push` setting, or as readPushRequest.
 */
export async function sendPush(engine: DataEngine, outbound: OutboundClient, body: unknown, log: Logger): Promise<string> {
  const settings = engine.settings().push;
  if (!settings) throw push115('Missing push configuration: set the app\'s "push" setting ({"ios": ..., "android": ..., "web": ...}).');
  const request = readPushRequest(body);
  // A bad `where` is the caller's mistake, answered now (its Parse error), not a failed status later.
  await engine.countRows('_Installation', request.where);
  const payload = JSON.stringify(request.data);
  const { row } = await engine.create(
    '_PushStatus',
    {
      pushTime: request.pushTime,
      source: 'rest',
      query: JSON.stringify(request.where),
      payload,
      ...(typeof request.data.title === 'string' ? { title: request.data.title } : {}),
      ...(request.expiry !== undefined ? { expiry: request.expiry } : {}),
      ...(request.expirationInterval !== undefined ? { expiration_interval: request.expirationInterval } : {}),
      status: 'pending',
      numSent: 0,
      pushHash: createHash('md5').update(typeof request.data.alert === 'string' ? request.data.alert : payload).digest('hex'),
      ACL: {},
    },
    MASTER,
  );
  void deliver(engine, outbound, settings, request, row.objectId).catch(async (error: unknown) => {
    log.warn({ err: error, app: engine.appId, push: row.objectId }, 'push delivery failed');
    await engine.update('_PushStatus', row.objectId, { status: 'failed', errorMessage: { message: (error as Error).message } }, MASTER).catch(() => undefined);
  });
  return row.objectId;
}

async function deliver(engine: DataEngine, outbound: OutboundClient, settings: PushSettings, request: PushRequest, statusId: string): Promise<void> {
  await engine.update('_PushStatus', statusId, { status: 'running' }, MASTER);
  const where = { $and: [request.where, { deviceType: { $in: ['ios', 'osx', 'tvos', 'android', 'web'] } }] };
  const installations: StoredRow[] = [];
  for (let skip = 0; ; skip += PAGE) {
    const page = await engine.rows('_Installation', { where, limit: PAGE, skip, order: 'objectId' });
    installations.push(...page.filter((r) => typeof r.data.deviceToken === 'string' && r.data.deviceToken !== ''));
    if (page.length < PAGE) break;
  }
  const byType = new Map<string, StoredRow[]>();
  for (const row of installations) {
    const type = APPLE.has(row.data.deviceType as string) ? 'ios' : (row.data.deviceType as string);
    byType.set(type, [...(byType.get(type) ?? []), row]);
  }
  const sentPerType: Record<string, number> = {};
  const failedPerType: Record<string, number> = {};
  const reasons = new Map<string, number>();
  const record = (type: string, results: Delivery[]) => {
    for (const result of results) {
      if (result.ok) sentPerType[type] = (sentPerType[type] ?? 0) + 1;
      else {
        failedPerType[type] = (failedPerType[type] ?? 0) + 1;
        const key = `${type}: ${result.error}`;
        reasons.set(key, (reasons.get(key) ?? 0) + 1);
      }
    }
  };
  const ttl = request.expiry !== undefined ? Math.max(0, Math.floor((request.expiry - Date.now()) / 1000)) : 4 * 7 * 24 * 3600;
  for (const [type, rows] of byType) {
    const missing = (what: string) => record(type, rows.map(() => ({ ok: false, error: `no ${what} push configured for this app` })));
    try {
      if (type === 'ios') {
        if (!settings.ios) missing('ios');
        else {
          const badges = await badgesFor(engine, rows, request.data.badge);
          record(type, await new ApnsSender(settings.ios, outbound).send(rows.map((r, i) => ({ deviceToken: r.data.deviceToken as string, payload: applePayload(request.data, badges[i]) })), request.expiry));
        }
      } else if (type === 'android') {
        if (!settings.android) missing('android');
        else record(type, await new FcmSender(settings.android, outbound.fetch).send(rows.map((r) => ({ deviceToken: r.data.deviceToken as string, message: fcmMessage(request.data) }))));
      } else if (type === 'web') {
        if (!settings.web) missing('web');
        else record(type, await new WebPushSender(settings.web, outbound.fetch).send(rows.map((r) => ({ deviceToken: r.data.deviceToken as string, payload: JSON.stringify(request.data) })), ttl));
      }
    } catch (error) {
      record(type, rows.map(() => ({ ok: false, error: (error as Error).message })));
    }
  }
  const numSent = Object.values(sentPerType).reduce((a, b) => a + b, 0);
  const numFailed = Object.values(failedPerType).reduce((a, b) => a + b, 0);
  await engine.update(
    '_PushStatus',
    statusId,
    {
      status: 'succeeded',
      numSent,
      numFailed,
      count: installations.length,
      sentPerType,
      failedPerType,
      // A list, not an object keyed by the error: keys may not hold "." or "$".
      ...(reasons.size ? { errorMessage: { failures: [...reasons].map(([key, count]) => ({ deviceType: key.slice(0, key.indexOf(':')), error: key.slice(key.indexOf(':') + 2), count })) } } : {}),
    },
    MASTER,
  );
}

/** The badge of each Apple installation: `"Increment"` adds one to its own (and saves it), a number sets it. */
async function badgesFor(engine: DataEngine, rows: StoredRow[], badge: unknown): Promise<Array<number | undefined>> {
  if (typeof badge === 'number') return rows.map(() => badge);
  if (!(badge === 'Increment' || (isPlainObject(badge) && badge.__op === 'Increment'))) return rows.map(() => undefined);
  const by = isPlainObject(badge) && typeof badge.amount === 'number' ? badge.amount : 1;
  const next = rows.map((r) => (typeof r.data.badge === 'number' ? r.data.badge : 0) + by);
  await Promise.all(rows.map((r, i) => engine.update('_Installation', r.objectId, { badge: next[i] }, MASTER)));
  return next;
}

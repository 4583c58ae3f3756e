import { WEBHOOK_TRIGGERS, type Webhook } from '../../cloud/webhooks.js';
import type { TriggerName } from '../../cloud/types.js';
import { ParseCode, ParseError } from '../../errors.js';
import { isClassName } from '../../types.js';
import { isPlainObject } from '../../values.js';
import type { DataRouter } from '../router.js';
import { ok, type DataRequest } from '../types.js';
import { requireMaster } from './classes.js';

const hookError = (message: string) => new ParseError(ParseCode.WEBHOOK_ERROR, message);

/** Parse Server's answer to a declaration it cannot read, with what is wrong. */
const invalid = (why: string) => hookError(`invalid hook declaration: ${why}`);

function readUrl(value: unknown): string {
  if (typeof value !== 'string' || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw invalid('url must be an http(s) URL, such as https://hooks.example.com/hello');
  }
  return value;
}

function readFunctionName(value: unknown): string {
  if (typeof value !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(value)) throw invalid('functionName must be a function name, such as "hello"');
  return value;
}

function readTrigger(className: unknown, triggerName: unknown): { className: string; triggerName: TriggerName } {
  if (!isClassName(className)) {
    throw invalid('className must be a class name, such as "GameScore"');
  }
  if (typeof triggerName !== 'string' || !(WEBHOOK_TRIGGERS as readonly string[]).includes(triggerName)) {
    throw invalid(`triggerName must be one of ${WEBHOOK_TRIGGERS.join(', ')}`);
  }
  return { className, triggerName: triggerName as TriggerName };
}

const isFunction = (hook: Webhook, name: string) => 'functionName' in hook && hook.functionName === name;
const isTrigger = (hook: Webhook, className: string, triggerName: string) => 'className' in hook && hook.className === className && hook.triggerName === triggerName;
const body = (req: DataRequest) => (isPlainObject(req.body) ? req.body : {});
const deleting = (req: DataRequest) => body(req).__op === 'Delete';

/**
 * Webhooks (Parse REST guide, "Hooks"; Parse Server's HooksRouter), master key only:
 * `GET /hooks/functions`, `GET /hooks/functions/<name>`, `POST /hooks/functions` `{functionName,
 * url}`, `PUT /hooks/functions/<name>` `{url}` (or `{"__op": "Delete"}`), `DELETE
 * /hooks/functions/<name>`, and the same under `/hooks/triggers` with `{className, triggerName, url}`
 * and `/hooks/triggers/<className>/<triggerName>`. Refusals are Parse Server's 143 with its texts.
 */
export function hookRoutes(router: DataRouter): void {
  const store = (req: DataRequest) => {
    requireMaster(req);
    return req.context.webhooks;
  };
  const appId = (req: DataRequest) => req.engine.appId;

  router.on('GET', '/hooks/functions', async (req) => ok((await store(req).list(appId(req))).filter((h) => 'functionName' in h)));
  router.on('GET', '/hooks/triggers', async (req) => ok((await store(req).list(appId(req))).filter((h) => 'className' in h)));
  router.on('GET', '/hooks/functions/:name', async (req, { name }) => {
    const found = (await store(req).list(appId(req))).find((h) => isFunction(h, name!));
    if (!found) throw hookError(`no function named: ${name} is defined`);
    return ok(found);
  });
  router.on('GET', '/hooks/triggers/:className/:triggerName', async (req, { className, triggerName }) => {
    const found = (await store(req).list(appId(req))).find((h) => isTrigger(h, className!, triggerName!));
    if (!found) throw hookError(`class ${className} does not exist`);
    return ok(found);
  });

  router.on('POST', '/hooks/functions', async (req) => {
    const hooks = store(req);
    const hook = { functionName: readFunctionName(body(req).functionName), url: readUrl(body(req).url) };
    await hooks.change(appId(req), (list) => {
      if (list.some((h) => isFunction(h, hook.functionName))) throw hookError(`function name: ${hook.functionName} already exists`);
      return { list: [...list, hook], result: undefined };
    });
    return ok(hook);
  });
  router.on('POST', '/hooks/triggers', async (req) => {
    const hooks = store(req);
    const hook = { ...readTrigger(body(req).className, body(req).triggerName), url: readUrl(body(req).url) };
    await hooks.change(appId(req), (list) => {
      if (list.some((h) => isTrigger(h, hook.className, hook.triggerName))) throw hookError(`class ${hook.className} already has trigger ${hook.triggerName}`);
      return { list: [...list, hook], result: undefined };
    });
    return ok(hook);
  });

  const removeFunction = async (req: DataRequest, name: string) => {
    await store(req).change(appId(req), (list) => ({ list: list.filter((h) => !isFunction(h, name)), result: undefined }));
    return ok({});
  };
  const removeTrigger = async (req: DataRequest, className: string, triggerName: string) => {
    await store(req).change(appId(req), (list) => ({ list: list.filter((h) => !isTrigger(h, className, triggerName)), result: undefined }));
    return ok({});
  };
  router.on('DELETE', '/hooks/functions/:name', (req, { name }) => removeFunction(req, name!));
  router.on('DELETE', '/hooks/triggers/:className/:triggerName', (req, { className, triggerName }) => removeTrigger(req, className!, triggerName!));

  router.on('PUT', '/hooks/functions/:name', async (req, { name }) => {
    if (deleting(req)) return removeFunction(req, name!);
    const hooks = store(req);
    const hook = { functionName: name!, url: readUrl(body(req).url) };
    await hooks.change(appId(req), (list) => {
      if (!list.some((h) => isFunction(h, name!))) throw hookError(`no function named: ${name} is defined`);
      return { list: list.map((h) => (isFunction(h, name!) ? hook : h)), result: undefined };
    });
    return ok(hook);
  });
  router.on('PUT', '/hooks/triggers/:className/:triggerName', async (req, { className, triggerName }) => {
    if (deleting(req)) return removeTrigger(req, className!, triggerName!);
    const hooks = store(req);
    const hook = { ...readTrigger(className, triggerName), url: readUrl(body(req).url) };
    await hooks.change(appId(req), (list) => {
      if (!list.some((h) => isTrigger(h, className!, triggerName!))) throw hookError(`class ${className} does not exist`);
      return { list: list.map((h) => (isTrigger(h, className!, triggerName!) ? hook : h)), result: undefined };
    });
    return ok(hook);
  });
}

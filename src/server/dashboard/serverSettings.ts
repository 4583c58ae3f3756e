import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_SETTINGS, SETTING_HELP, SETTING_KEYS, settingValue, type ServerSettings, type SettingKey } from '../../data/settings.js';
import { SettingRefused, type BackendApp } from '../../platform/backendapps/service.js';
import { appCrumbs, appHeading, appHref } from './appframe.js';
import { flashOf, formOf, ownApp, redirectWith, sendPage, sessionOf, type Dashboard } from './context.js';
import { attr, html, type Html } from './html.js';
import { csrfField } from './layout.js';

type AppParams = { Params: { appId: string } };

/** How each option is edited: a checkbox, a number (empty: the default) or JSON text (empty: the default). */
const KIND: Record<SettingKey, 'flag' | 'number' | 'json'> = {
  allowClientClassCreation: 'flag',
  defaultLimit: 'number',
  maxLimit: 'number',
  sessionLength: 'number',
  expireInactiveSessions: 'flag',
  revokeSessionOnPasswordReset: 'flag',
  enforcePrivateUsers: 'flag',
  preventLoginWithUnverifiedEmail: 'flag',
  enableAnonymousUsers: 'flag',
  auth: 'json',
  push: 'json',
  verifyUserEmails: 'flag',
  emailVerifyTokenValidityDuration: 'number',
  emailAdapter: 'json',
  'fileUpload.enableForPublic': 'flag',
  'fileUpload.enableForAnonymousUser': 'flag',
  'fileUpload.enableForAuthenticatedUser': 'flag',
  'fileUpload.fileExtensions': 'json',
  // Text such as 20mb stays text, a number is bytes: both are sizes (settings.ts).
  maxUploadSize: 'number',
  protectedFields: 'json',
  'liveQuery.classNames': 'json',
};

/** The sections of the form, in SETTING_KEYS order. */
const GROUPS: Array<{ title: string; keys: SettingKey[] }> = [
  { title: 'Classes and queries', keys: ['allowClientClassCreation', 'defaultLimit', 'maxLimit', 'protectedFields'] },
  { title: 'Users and sessions', keys: ['sessionLength', 'expireInactiveSessions', 'revokeSessionOnPasswordReset', 'enforcePrivateUsers', 'preventLoginWithUnverifiedEmail'] },
  { title: 'Sign-in providers', keys: ['enableAnonymousUsers', 'auth'] },
  { title: 'Push', keys: ['push'] },
  { title: 'Emails', keys: ['verifyUserEmails', 'emailVerifyTokenValidityDuration', 'emailAdapter'] },
  { title: 'File uploads', keys: ['fileUpload.enableForPublic', 'fileUpload.enableForAnonymousUser', 'fileUpload.enableForAuthenticatedUser', 'fileUpload.fileExtensions', 'maxUploadSize'] },
  { title: 'LiveQuery', keys: ['liveQuery.classNames'] },
];

const fieldId = (key: SettingKey) => `setting-${key.replace('.', '-')}`;

/** An option's value as its field shows it. */
function shown(key: SettingKey, value: unknown): string {
  if (value === null || value === undefined) return '';
  return KIND[key] === 'json' ? JSON.stringify(value, null, 2) : String(value);
}

/**
 * The changes a submitted form makes: only options whose value differs from the one in force; a
 * value equal to the default is sent as null, so the app follows the default again. Values are
 * converted, never judged: text that is not a number or not JSON stays text, so that the options'
 * own schema names the field in its error. A checkbox a browser omitted means "off".
 */
export function settingsChanges(current: ServerSettings, form: Record<string, string | undefined>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const text = form[key]?.trim();
    let value: unknown;
    if (KIND[key] === 'flag') value = text !== undefined;
    else if (text === undefined) continue;
    else if (text === '') value = null;
    else if (KIND[key] === 'number') value = /^[+-]?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    else {
      try {
        value = JSON.parse(text);
      } catch {
        value = text;
      }
    }
    const inForce = settingValue(current, key);
    if (value === null ? inForce === settingValue(DEFAULT_SETTINGS, key) : isDeepStrictEqual(value, inForce)) continue;
    changes[key] = value !== null && isDeepStrictEqual(value, settingValue(DEFAULT_SETTINGS, key)) ? null : value;
  }
  return changes;
}

/** A refused save: the values as sent, the refused option and why. */
interface Problem {
  given: Record<string, string | undefined>;
  key: SettingKey | undefined;
  error: string;
}

/** The option a refusal names (its key may go deeper: `fileUpload.fileExtensions.1`, `protectedFields.Person`). */
const refusedKey = (key: string): SettingKey | undefined => SETTING_KEYS.find((k) => key === k || key.startsWith(`${k}.`));

function field(key: SettingKey, settings: ServerSettings, problem: Problem | undefined): Html {
  const id = fieldId(key);
  const invalid = problem?.key === key;
  const described = `${id}-hint${invalid ? ` ${id}-error` : ''}`;
  const fallback = settingValue(DEFAULT_SETTINGS, key);
  const hint = html`<span class="hint" id="${id}-hint">${SETTING_HELP[key]} (<code>${key}</code>, default <code>${JSON.stringify(fallback)}</code>)</span>`;
  const error = invalid ? html`<span class="field-error" id="${id}-error" role="alert">${problem!.error}</span>` : '';
  const ariaInvalid = invalid ? html` aria-invalid="true"` : '';
  if (KIND[key] === 'flag') {
    const checked = problem ? problem.given[key] !== undefined : settingValue(settings, key) === true;
    return html`<div class="field"><span class="check"><input type="checkbox" id="${id}" name="${key}" aria-describedby="${described}"${attr('checked', checked)}${ariaInvalid}>
    <label for="${id}"><code>${key}</code></label></span>${hint}${error}</div>`;
  }
  const value = problem ? (problem.given[key] ?? '') : shown(key, settingValue(settings, key));
  const control =
    KIND[key] === 'json'
      ? html`<textarea id="${id}" name="${key}" rows="4" spellcheck="false" aria-describedby="${described}"${ariaInvalid}>${value}</textarea>`
      : html`<input id="${id}" name="${key}" value="${value}" inputmode="numeric" autocomplete="off" aria-describedby="${described}"${ariaInvalid}>`;
  return html`<div class="field"><label for="${id}"><code>${key}</code></label>${control}${hint}${error}</div>`;
}

async function settingsPage(d: Dashboard, request: FastifyRequest, reply: FastifyReply, app: BackendApp, problem?: Problem): Promise<FastifyReply> {
  const session = sessionOf(request);
  const { settings } = (await d.services.backendApps.serverSettings(app.appId))!;
  return sendPage(reply, problem ? 400 : 200, {
    title: `Server settings · ${app.appName}`,
    session,
    crumbs: appCrumbs(app, { label: 'Server settings' }),
    heading: appHeading(app, 'settings'),
    body: html`${flashOf(d, request)}
<p class="hint">The options a Parse Server app is deployed with, under Parse Server's names; the data API uses a change from the next request. Empty fields and values equal to the default follow the default.</p>
${problem ? html`<div class="notice bad" role="alert"><strong>Nothing was saved:</strong> ${problem.error}</div>` : ''}
<form method="post" action="${appHref(app.appId, 'settings')}">
  ${csrfField(session)}
  ${GROUPS.map((g) => html`<fieldset class="panel"><legend>${g.title}</legend>${g.keys.map((k) => field(k, settings, problem))}</fieldset>`)}
  <button type="submit">Save server settings</button>
</form>`,
  });
}

/**
 * A Backend App's "Server settings" page: shows the options in force and saves the ones
 * the form changed through `BackendAppService.configure` (all or nothing); a refusal shows the page
 * again with the values as sent and the error next to the field it names.
 */
export function serverSettingsRoutes(app: FastifyInstance, d: Dashboard): void {
  app.get<AppParams>('/apps/:appId/settings', async (request, reply) => {
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    return settingsPage(d, request, reply, backendApp);
  });

  app.post<AppParams>('/apps/:appId/settings', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const form = formOf(request);
    const apps = d.services.backendApps;
    const changes = settingsChanges((await apps.serverSettings(backendApp.appId))!.settings, form);
    const keys = Object.keys(changes);
    if (keys.length === 0) {
      return redirectWith(d, reply, session, appHref(backendApp.appId, 'settings'), { kind: 'ok', title: 'Nothing changed: the settings were already so.', lines: [] });
    }
    try {
      await apps.configure(backendApp.appId, changes);
    } catch (error) {
      if (!(error instanceof SettingRefused)) throw error;
      return settingsPage(d, request, reply, backendApp, { given: form, key: refusedKey(error.key), error: error.message });
    }
    return redirectWith(d, reply, session, appHref(backendApp.appId, 'settings'), { kind: 'ok', title: `Saved ${keys.join(', ')}.`, lines: [] });
  });
}

import { ManagementError } from '../../errors.js';
import type { WebApp } from '../../platform/webapps/service.js';
import { invokeOperation } from '../../../tools/invoke.js';
import { updateWebApp } from '../../../tools/updateWebApp.js';
import type { Dashboard } from './context.js';
import { attr, html, type Html } from './html.js';
import { csrfField } from './layout.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';

/** The settings the form edits, under updateWebApp's field names (variables have their own forms). */
const SETTINGS = ['branchName', 'rootDirPath', 'port', 'healthCheckPath', 'autoDeploy'] as const;
type Setting = (typeof SETTINGS)[number];

/** What the form shows after a refused change: the values as sent and why they were refused. */
export interface SettingsProblem {
  given: Record<string, string | undefined>;
  error: string;
}

/** The outcome of a save: the app as it now is, or the operation's error text (nothing changed). */
export type SettingsResult = { ok: true; before: WebApp; after: WebApp; changed: Setting[] } | { ok: false; problem: SettingsProblem };

/**
 * The form's fields as an updateWebApp input holding only the settings that differ from the app's.
 * Values are converted, never judged: a port that is not a number stays text, so that the
 * operation's own schema names the field in its error. A text field missing from the form is left
 * alone; the checkbox, which a browser omits when unticked, means "off" when absent.
 */
export function settingsChange(webApp: WebApp, form: Record<string, string | undefined>): Partial<Record<Setting, unknown>> {
  const change: Partial<Record<Setting, unknown>> = {};
  for (const name of ['branchName', 'rootDirPath', 'healthCheckPath'] as const) {
    const value = form[name]?.trim();
    if (value !== undefined && value !== webApp[name]) change[name] = value;
  }
  const port = form.port?.trim();
  if (port !== undefined) {
    const value = /^[+-]?\d+(\.\d+)?$/.test(port) ? Number(port) : port;
    if (value !== webApp.port) change.port = value;
  }
  const autoDeploy = form.autoDeploy !== undefined;
  if (autoDeploy !== webApp.autoDeploy) change.autoDeploy = autoDeploy;
  return change;
}

/**
 * Saves the settings the form changed through the updateWebApp operation itself (its input schema,
 * then `WebAppService.update`), so the dashboard accepts and refuses exactly what the API does.
 * @throws what the operation throws other than a ManagementError (a bug, answered as a 500).
 */
export async function saveSettings(d: Dashboard, session: DashboardSession, webApp: WebApp, form: Record<string, string | undefined>): Promise<SettingsResult> {
  const change = settingsChange(webApp, form);
  if (Object.keys(change).length === 0) return { ok: true, before: webApp, after: webApp, changed: [] };
  try {
    // The operation's output schema is the Web App view itself.
    const after = (await invokeOperation(updateWebApp, { appId: webApp.appId, ...change }, { account: session.account, services: d.services })) as unknown as WebApp;
    return { ok: true, before: webApp, after, changed: SETTINGS.filter((s) => after[s] !== webApp[s]) };
  } catch (error) {
    if (!(error instanceof ManagementError)) throw error;
    return { ok: false, problem: { given: form, error: error.message } };
  }
}

/** The message after a save: what changed, and whether a deployment started. */
export function savedText(result: Extract<SettingsResult, { ok: true }>): string {
  if (result.changed.length === 0) return 'Nothing changed: the settings were already so.';
  const started = result.after.lastDeployment && result.after.lastDeployment.id !== result.before.lastDeployment?.id;
  return `Saved ${result.changed.join(', ')}. ${started ? 'A new deployment started.' : 'No new deployment was needed.'}`;
}

const FIELDS: Array<{ name: Exclude<Setting, 'autoDeploy'>; label: string; hint: string; numeric?: boolean }> = [
  { name: 'branchName', label: 'Branch', hint: 'The branch to deploy.' },
  { name: 'rootDirPath', label: 'Folder', hint: 'The folder of the repository that holds the Dockerfile; "." is its root.' },
  { name: 'port', label: 'Port', hint: 'The port the container listens on.', numeric: true },
  { name: 'healthCheckPath', label: 'Health check path', hint: 'Must answer 2xx before a deployment goes live, such as "/" or "/health".' },
];

/**
 * The settings form of a Web App's page, with the app's values, or after a refused change the
 * values as sent, the error above the form and the fields it names marked invalid.
 */
export function settingsForm(session: DashboardSession, action: string, webApp: WebApp, problem?: SettingsProblem): Html {
  const value = (name: Setting): string => (problem ? (problem.given[name] ?? '') : String(webApp[name]));
  const autoDeploy = problem ? problem.given.autoDeploy !== undefined : webApp.autoDeploy;
  // The operation's messages name fields as it does (`port must be ...`, `healthCheckPath "x" ...`).
  const invalid = (name: Setting) => problem !== undefined && new RegExp(`\\b${name}\\b`).test(problem.error);
  const describedBy = (name: Setting) => `setting-${name}-hint${invalid(name) ? ' settings-error' : ''}`;
  return html`<form method="post" action="${action}" aria-labelledby="settings-heading">
  ${csrfField(session)}
  <h3 id="settings-heading">Settings</h3>
  ${problem ? html`<div class="notice bad" role="alert" id="settings-error"><strong>Nothing was saved:</strong> ${problem.error}</div>` : ''}
  ${FIELDS.map(
    (f) => html`<div class="field"><label for="setting-${f.name}">${f.label}</label>
    <input id="setting-${f.name}" name="${f.name}" value="${value(f.name)}" spellcheck="false" autocomplete="off"${f.numeric ? html` inputmode="numeric"` : ''}
      aria-describedby="${describedBy(f.name)}"${invalid(f.name) ? html` aria-invalid="true"` : ''}>
    <span class="hint" id="setting-${f.name}-hint">${f.hint} (<code>${f.name}</code>)</span></div>`,
  )}
  <div class="field"><span class="check"><input type="checkbox" id="setting-autoDeploy" name="autoDeploy" aria-describedby="${describedBy('autoDeploy')}"${attr('checked', autoDeploy)}>
    <label for="setting-autoDeploy">Deploy again on every push to the branch</label></span>
    <span class="hint" id="setting-autoDeploy-hint">(<code>autoDeploy</code>)</span></div>
  <p class="hint">Changing the branch, folder, port or health check starts a new deployment; auto-deploy alone does not.</p>
  <button type="submit">Save settings</button>
</form>`;
}

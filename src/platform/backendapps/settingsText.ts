import fs from 'node:fs';
import { invalid } from '../../errors.js';
import { SETTING_KEYS, settingValue, type ServerSettings } from '../../data/settings.js';

/**
 * Server options as text, for the command line (`backyard app config`, `backyard app import --config
 * --set`): `key=value` assignments in, `key<TAB>JSON value` lines out.
 */

/**
 * Reads `key=value` assignments: the value is JSON when it parses as JSON (`5`, `true`, `null`,
 * `["^png$"]`), else the text itself. The last assignment of a key wins.
 * @throws ManagementError(invalid) naming an assignment without `=` or without a key.
 */
export function parseAssignments(assignments: readonly string[]): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const assignment of assignments) {
    const eq = assignment.indexOf('=');
    const key = eq < 0 ? '' : assignment.slice(0, eq).trim();
    if (key === '') throw invalid(`"${assignment}" is not key=value: write e.g. maxLimit=1000 or fileUpload.enableForPublic=true.`);
    const text = assignment.slice(eq + 1);
    try {
      changes[key] = JSON.parse(text);
    } catch {
      changes[key] = text;
    }
  }
  return changes;
}

/**
 * Reads a JSON file of options in Parse Server's shape (`{"maxLimit": 1000, "fileUpload":
 * {"enableForPublic": true}}`).
 * @throws ManagementError(invalid) when the file cannot be read or is not a JSON object.
 */
export function readSettingsFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw invalid(`Cannot read the settings file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(`The settings file ${file} is not valid JSON.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid(`The settings file ${file} must hold a JSON object such as {"maxLimit": 1000}.`);
  }
  return parsed as Record<string, unknown>;
}

/** Every option in force, one `key<TAB>JSON value` line each, in SETTING_KEYS order. */
export const settingLines = (settings: ServerSettings): string =>
  SETTING_KEYS.map((key) => `${key}\t${JSON.stringify(settingValue(settings, key))}\n`).join('');

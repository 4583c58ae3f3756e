import { FEATURES, type Feature } from '../../tools/operation.js';
import type { CallerLimits } from '../../tools/limits.js';

/**
 * What one MCP connection offers: the caller's limits, from its
 * credentials and from what the client asked for, and whether tools refused as read-only are left
 * out of `tools/list` (when the client asked for read-only itself, it gets the lean list).
 */
export interface McpProfile {
  limits: CallerLimits;
  hideReadOnly: boolean;
}

/** What a client may ask for: `backyard mcp --read-only --features=… --app=…`, or the same as `/mcp` query parameters. */
export interface AskedOptions {
  readOnly?: boolean;
  /** Comma-separated feature groups: guides, devenv, backend, webapps. */
  features?: string;
  /** The appId of the one Backend App to reach. */
  app?: string;
}

/**
 * The profile a client asked for.
 * @returns `{ problem }` naming the option and what was wrong (an unknown feature, an empty app).
 */
export function askedProfile(options: AskedOptions, names: { readOnly: string; features: string; app: string }): McpProfile | { problem: string } {
  const limits: CallerLimits = {};
  if (options.readOnly) {
    limits.readOnly = `this connection was opened read-only (${names.readOnly}): ask the person to connect without it to make changes.`;
  }
  if (options.features !== undefined) {
    const asked = options.features.split(',').map((f) => f.trim()).filter(Boolean);
    const unknown = asked.filter((f) => !(FEATURES as readonly string[]).includes(f));
    if (unknown.length || asked.length === 0) {
      return { problem: `${names.features} must list feature groups among ${FEATURES.join(', ')}, comma-separated; got "${options.features}".` };
    }
    limits.features = new Set(asked as Feature[]);
  }
  if (options.app !== undefined) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.app)) return { problem: `${names.app} must be the appId of a Backend App; got "${options.app}".` };
    limits.appId = options.app;
  }
  return { limits, hideReadOnly: options.readOnly === true };
}

const QUERY_NAMES = { readOnly: 'read_only=true', features: 'features', app: 'app' };

/**
 * The profile asked for by `/mcp` query parameters (the connector URL a person pastes, as
 * Supabase's `?read_only=true&features=…`): `read_only`, `features`, `app`.
 * @returns `{ problem }` for a malformed or unknown parameter, answered as a 400.
 */
export function profileFromQuery(query: Record<string, unknown>): McpProfile | { problem: string } {
  const unknown = Object.keys(query).filter((k) => !['read_only', 'features', 'app'].includes(k));
  if (unknown.length) return { problem: `Unknown parameter ${unknown[0]} in the /mcp URL: use read_only=true, features=<groups> or app=<appId>.` };
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : query[name] === undefined ? undefined : String(query[name]));
  const readOnly = text('read_only');
  if (readOnly !== undefined && readOnly !== 'true' && readOnly !== 'false') return { problem: `read_only in the /mcp URL must be true or false; got "${readOnly}".` };
  return askedProfile({ readOnly: readOnly === 'true', features: text('features'), app: text('app') }, QUERY_NAMES);
}

import { forbidden } from '../src/errors.js';
import { annotationsFor, type AnyOperation, type Feature } from './operation.js';

/**
 * What a caller may reach within its account (after Supabase's MCP
 * server). Limits come from the credentials (a token made with `--read-only` or `--app`, an OAuth
 * grant of `mcp:read`) and, for MCP, from what the client asked for (`backyard mcp --read-only
 * --features=… --app=…`, or `/mcp?read_only=true&features=…&app=…`). Every limit only narrows.
 */
export interface CallerLimits {
  /** Why operations that change things are refused (a sentence for the assistant), or undefined. */
  readOnly?: string;
  /** The only Backend App the caller may reach: operations without an `appId` input are refused, but guides. */
  appId?: string;
  /** The feature groups offered; undefined for all. */
  features?: ReadonlySet<Feature>;
}

/** Two sets of limits together: each limit of either applies. Two different apps reach none. */
export function narrow(a: CallerLimits | undefined, b: CallerLimits | undefined): CallerLimits {
  let features = a?.features && b?.features ? new Set([...a.features].filter((f) => b.features!.has(f))) : (a?.features ?? b?.features);
  if (a?.appId && b?.appId && a.appId !== b.appId) features = new Set();
  return { readOnly: a?.readOnly ?? b?.readOnly, appId: a?.appId ?? b?.appId, features };
}

const takesAppId = (op: AnyOperation) => 'appId' in op.input.shape;

/**
 * Why `limits` keep `op` from being called at all (its feature is not offered, or it reaches more
 * than the one app), or undefined when they do not. Read-only is not decided here: see `refusal`.
 */
function outOfReach(op: AnyOperation, limits: CallerLimits): string | undefined {
  if (limits.features && !limits.features.has(op.feature)) {
    return `${op.name} is not offered on this connection: it belongs to the feature group "${op.feature}", and this connection offers ${[...limits.features].join(', ') || 'none'}.`;
  }
  if (limits.appId && op.feature !== 'guides' && !(op.feature === 'backend' && takesAppId(op))) {
    return `${op.name} is not offered on this connection, which is limited to the Backend App ${limits.appId}: only tools that take its appId, and the guides, are.`;
  }
  return undefined;
}

/** Whether an MCP connection lists `op` (hidden: out of reach, or changing things when `hideReadOnly`). */
export function offered(op: AnyOperation, limits: CallerLimits, hideReadOnly: boolean): boolean {
  if (outOfReach(op, limits)) return false;
  return !(hideReadOnly && limits.readOnly && !annotationsFor(op).readOnlyHint);
}

/**
 * Checks a call against the caller's limits before its handler runs (tools/invoke.ts), for the REST
 * API and MCP alike.
 * @throws ManagementError(forbidden) saying what was refused and what the person can change.
 */
export function checkLimits(op: AnyOperation, input: Record<string, unknown>, limits: CallerLimits | undefined): void {
  if (!limits) return;
  const refused = outOfReach(op, limits);
  if (refused) throw forbidden(refused);
  if (limits.appId && takesAppId(op) && input.appId !== limits.appId) {
    throw forbidden(`This connection is limited to the Backend App ${limits.appId}; appId "${String(input.appId)}" is out of its reach.`);
  }
  if (limits.readOnly && !annotationsFor(op).readOnlyHint) throw forbidden(`${op.name} changes things, and ${limits.readOnly}`);
}

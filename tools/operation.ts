import type { z } from 'zod';
import type { Services } from '../src/platform/services.js';
import type { Account } from '../src/platform/accounts/service.js';
import type { CallerLimits } from './limits.js';

/** The 20 operations of Interface A, in the spec's order (spec, "Endpoints", Interface A). */
export const OPERATION_NAMES = [
  'getGuide',
  'createDevelopmentEnvironment',
  'getDevelopmentEnvironments',
  'executeCommand',
  'interactWithCommandExecution',
  'inspectCommandExecution',
  'createRepohostInstallationAccessToken',
  'createBackendApp',
  'getBackendApps',
  'getBackendApp',
  'deployCloudCode',
  'getCloudCode',
  'callBackendAPI',
  'activateWebHosting',
  'createWebApp',
  'getWebApps',
  'getWebApp',
  'updateWebApp',
  'startDeployment',
  'getDeployment',
] as const;

/**
 * Lifecycle operations beyond the spec's 20 (docs/design.md, "Lifecycle operations"):
 * deleting, stopping and restarting what the spec's operations create, and the versions of cloud
 * code that deployCloudCode keeps. Listed after the spec's 20.
 */
export const LIFECYCLE_NAMES = [
  'deleteBackendApp',
  'stopWebApp',
  'startWebApp',
  'deleteWebApp',
  'deleteDevelopmentEnvironment',
  'restartDevelopmentEnvironment',
  'getCloudCodeVersions',
  'rollbackCloudCode',
] as const;

export type OperationName = (typeof OPERATION_NAMES)[number] | (typeof LIFECYCLE_NAMES)[number];

/**
 * What an operation does to the world, decided once per operation and turned into MCP annotations
 * by `annotationsFor` (the one place that decides hints; style.md, example 3).
 * - `read`    changes nothing
 * - `create`  adds a new resource each call; never removes anything
 * - `ensure`  brings something to a state; repeating it changes nothing more; removes nothing
 * - `replace` overwrites settings or state with what is sent; repeating it changes nothing more
 * - `mutate`  may overwrite or delete, and repeating it acts again (append, delete, run a command, restart)
 * - `end`     deletes or stops a resource; repeating it changes nothing more (a deleted one answers 404)
 */
export type Effect = 'read' | 'create' | 'ensure' | 'replace' | 'mutate' | 'end';

/**
 * The group an operation belongs to, as MCP connections select them (`--features`, `?features=`;
 * after Supabase's MCP server): guides, development environments, Backend Apps, Web Apps
 * with their repositories.
 */
export const FEATURES = ['guides', 'devenv', 'backend', 'webapps'] as const;
export type Feature = (typeof FEATURES)[number];

/** MCP tool annotations (MCP revision 2025-11-25 and 2026-07-28, "Tool annotations"). */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

const hints: Record<Effect, Omit<ToolAnnotations, 'title' | 'openWorldHint'>> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  ensure: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  replace: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  mutate: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  end: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
};

/** The MCP annotations of an operation, from its effect and whether it reaches outside Backyard. */
export const annotationsFor = (op: AnyOperation): ToolAnnotations => ({
  title: op.title,
  ...hints[op.effect],
  openWorldHint: op.openWorld,
});

/** Status codes an Interface A operation may answer besides its success status (spec, endpoints table). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 500;

/** Who is calling and what they can use; given to every handler by the front end. */
export interface OperationContext {
  account: Account;
  services: Services;
  /** Aborted when the caller goes away (HTTP connection closed, MCP cancellation). */
  signal?: AbortSignal;
  /** What the caller's credentials and connection allow (tools/limits.ts); undefined for everything. */
  limits?: CallerLimits;
  /**
   * Set when the caller follows progress (an MCP call with a `progressToken`): long
   * operations report what they are doing, one sentence a person can read per call, and may then
   * wait for the outcome they would otherwise leave to a follow-up call (a deployment's end).
   */
  progress?: (message: string) => void;
}

export type Handler<I extends z.ZodObject, O extends z.ZodObject> = (
  input: z.output<I>,
  ctx: OperationContext,
) => Promise<z.input<O>> | z.input<O>;

/**
 * One management operation, declared once (docs/design.md, "Code layout"): the REST route, the MCP tool,
 * the OpenAPI operation and the docs are all generated from this.
 *
 * Inputs are flat: path parameters, query parameters and body fields side by side in `input`, under
 * the spec's names (hyphenated query names in camelCase: `chat-title` → `chatTitle`). Fields that are
 * neither in `path` nor in `query` travel in the REST body.
 */
export interface Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: OperationName;
  /** Short human title (MCP `title`, OpenAPI `summary`). */
  title: string;
  /** Written for an LLM: when to use it, the spec's rules for it, what to call first. */
  description: string;
  effect: Effect;
  feature: Feature;
  /**
   * MCP answers this output field as plain text content, without `structuredContent`: a guide or a
   * file listing is text, and JSON-escaping it would double its size.
   */
  textResult?: keyof z.output<O> & string;
  /** True when the operation reaches things outside Backyard (the internet, a repository host). */
  openWorld: boolean;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path under `/v1`, with `{param}` placeholders named as `input` fields. */
  path: string;
  /** REST query parameter name → `input` field, e.g. `{ 'app-name': 'appName' }`. */
  query?: Readonly<Record<string, string>>;
  /** A strict object: unknown fields are refused. */
  input: I;
  /** What the handler returns and MCP carries as `structuredContent` (always an object). */
  output: O;
  /** 200 or 201 (spec, "Success response"). */
  successStatus: 200 | 201;
  /**
   * Where the REST body differs from `output`: the REST body is `output[key]` (a list the spec
   * returns bare, docs/design.md, decision 4), as JSON or, with `text`, as a `text/plain` string.
   */
  restBody?: { key: keyof z.output<O> & string; text?: boolean };
  /** Exactly the spec's "Other status codes" of the operation (docs/design.md, decision 3). */
  errors: readonly ErrorStatus[];
  /** The domain call; `null` while its service is not built (then neither routed nor listed). */
  handler: Handler<I, O> | null;
}

// The front ends treat operations uniformly; their handlers are checked where each is declared.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any>;

/** Identity function that lets TypeScript check an operation's handler against its own schemas. */
export const defineOperation = <const N extends OperationName, I extends z.ZodObject, O extends z.ZodObject>(
  op: Operation<I, O> & { name: N },
): Operation<I, O> & { name: N } => op;

/** Path parameter names of an operation, in order of appearance. */
export const pathParams = (op: AnyOperation): string[] => [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** Input fields that travel in the REST body. */
export function bodyFields(op: AnyOperation): string[] {
  const outside = new Set([...pathParams(op), ...Object.values(op.query ?? {})]);
  return Object.keys(op.input.shape).filter((k) => !outside.has(k));
}

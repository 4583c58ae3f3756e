import { INTERNAL_ERROR_TEXT, ManagementError } from '../src/errors.js';
import type { AnyOperation, ErrorStatus, OperationContext } from './operation.js';
import { checkLimits } from './limits.js';
import { parseInput } from './validation.js';

/**
 * Runs one operation for a caller, the path both front ends share: validate the flat input, check
 * the caller's limits (tools/limits.ts), call the handler, check the result against the output schema.
 * @returns the handler's output, as `op.output` parses it.
 * @throws ManagementError for the caller's mistakes and known conditions; anything else is a bug
 *   that the front end reports as a 500 without its details.
 */
export async function invokeOperation(op: AnyOperation, rawInput: unknown, ctx: OperationContext): Promise<Record<string, unknown>> {
  if (!op.handler) throw new Error(`${op.name} is not built yet`);
  const input = parseInput(op.input, rawInput);
  checkLimits(op, input as Record<string, unknown>, ctx.limits);
  const result = await op.handler(input, ctx);
  return op.output.parse(result) as Record<string, unknown>;
}

/** A failure as a caller sees it: a status the operation lists, and a text. */
export interface CallerFailure {
  status: ErrorStatus;
  text: string;
  /** True when the error is Backyard's own fault and its details belong in the log. */
  internal: boolean;
}

/**
 * Maps any thrown value to what the caller sees, keeping to the codes the operation lists
 * (docs/design.md, decision 3): a `notFound` or `forbidden` where the operation lists no 404 or 403 is a
 * 400; everything that is not a ManagementError is a 500 with a generic text.
 */
export function failureFor(error: unknown, op: AnyOperation | undefined): CallerFailure {
  if (!(error instanceof ManagementError)) return { status: 500, text: INTERNAL_ERROR_TEXT, internal: true };
  const lists = (s: ErrorStatus) => !op || op.errors.includes(s);
  switch (error.kind) {
    case 'invalid':
      return { status: 400, text: error.message, internal: false };
    case 'unauthorized':
      return { status: 401, text: error.message, internal: false };
    case 'forbidden':
      return { status: lists(403) ? 403 : 400, text: error.message, internal: false };
    case 'notFound':
      return { status: lists(404) ? 404 : 400, text: error.message, internal: false };
    case 'unavailable':
      return { status: 500, text: error.message, internal: false };
  }
}

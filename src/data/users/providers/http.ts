import { refused } from './idToken.js';
import type { OutboundFetch, OutboundInit } from '../../../shared/outbound/client.js';
import { OutboundError } from '../../../shared/outbound/errors.js';

const REQUEST_TIMEOUT_MS = 10_000;
/** A provider's answer larger than this is not a token or a user. */
const MAX_ANSWER_BYTES = 1 << 20;

/**
 * One request to a sign-in provider's endpoint, answered as JSON. Redirects are not followed: a
 * provider's endpoints answer where they are.
 * @returns the status and the parsed body (undefined when it is not JSON).
 * @throws ParseError 101 naming the provider and the address when it cannot be reached (or is not
 *   a public address the operator did not allow) in 10 s, redirects, or answers more than 1 MiB.
 */
export async function askProvider(
  fetch: OutboundFetch,
  label: string,
  url: string,
  init: OutboundInit = {},
): Promise<{ status: number; ok: boolean; body: unknown }> {
  const origin = new URL(url).origin;
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', timeoutMs: REQUEST_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES });
  } catch (error) {
    throw refused(`${label} could not be reached at ${origin} (${(error as Error).message}); try again later.`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (error instanceof OutboundError && error.reason === 'too-large') throw refused(`${label} answered more than 1 MiB at ${origin}.`);
    throw refused(`${label} stopped answering at ${origin} (${(error as Error).message}); try again later.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, ok: response.ok, body };
}

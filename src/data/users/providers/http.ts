import { refused } from './idToken.js';

const REQUEST_TIMEOUT_MS = 10_000;
/** A provider's answer larger than this is not a token or a user. */
const MAX_ANSWER_BYTES = 1 << 20;

/**
 * One request to a sign-in provider's endpoint, answered as JSON.
 * @returns the status and the parsed body (undefined when it is not JSON).
 * @throws ParseError 101 naming the provider and the address when it cannot be reached in 10 s or
 *   answers more than 1 MiB.
 */
export async function askProvider(
  fetch: typeof globalThis.fetch,
  label: string,
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; ok: boolean; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    throw refused(`${label} could not be reached at ${new URL(url).origin} (${(error as Error).message}${cause}); try again later.`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw refused(`${label} stopped answering at ${new URL(url).origin} (${(error as Error).message}); try again later.`);
  }
  if (text.length > MAX_ANSWER_BYTES) throw refused(`${label} answered more than 1 MiB at ${new URL(url).origin}.`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, ok: response.ok, body };
}

import type { Page } from 'playwright-core';

/** A request a page made, as the browser tests judge it. */
export interface SeenRequest {
  method: string;
  url: string;
  /** Playwright's resource type: document, script, fetch, image... */
  type: string;
  headers: Record<string, string>;
  body: string | null;
  /** The answer's status; undefined while none came. */
  status?: number;
  /** Why the request got no answer (Playwright's error text). */
  failure?: string;
  /** The test's step it was sent in (what `step` answered then). */
  step: string;
}

/**
 * Records every request `page` makes from now on, with its answer's status or its failure, matched by
 * the request object itself (two requests to one URL stay apart).
 * @param step names the test's current step for each request (default: '').
 */
export function recordRequests(page: Page, step: () => string = () => ''): SeenRequest[] {
  const seen: SeenRequest[] = [];
  const byRequest = new Map<unknown, SeenRequest>();
  page.on('request', (request) => {
    const entry: SeenRequest = { method: request.method(), url: request.url(), type: request.resourceType(), headers: request.headers(), body: request.postData(), step: step() };
    byRequest.set(request, entry);
    seen.push(entry);
  });
  page.on('response', (response) => {
    const entry = byRequest.get(response.request());
    if (entry) entry.status = response.status();
  });
  page.on('requestfailed', (request) => {
    const entry = byRequest.get(request);
    if (entry) entry.failure = request.failure()?.errorText ?? 'failed';
  });
  return seen;
}

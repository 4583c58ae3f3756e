/**
 * Why an outbound request failed:
 * - `refused`: an address that is not public and not allowed, on the first hop or a redirect's;
 *   or a scheme other than http and https;
 * - `unreachable`: no connection, or the peer stopped answering;
 * - `timeout`: the whole exchange took longer than its bound;
 * - `redirect`: a redirect where none is followed, too many, or from https to http;
 * - `too-large`: a body past its bound.
 */
export type OutboundFailure = 'refused' | 'unreachable' | 'timeout' | 'redirect' | 'too-large';

/** A failed outbound request; the message names the origin or host and says what happened, for the caller's own error text. */
export class OutboundError extends Error {
  override name = 'OutboundError';
  constructor(
    readonly reason: OutboundFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The window in which the connections that sent requests are counted, in milliseconds. */
const WINDOW_MS = 100;

/**
 * Who is calling the data API right now, to tell a lone writer (one client sending one request at a
 * time) from concurrent ones: a lone write may sync its commit at once on the event loop instead of
 * sharing a group commit in the thread pool (durability.ts, `durable(alone)`).
 *
 * Counting requests in flight would not tell: while a sync blocks the event loop, requests of other
 * clients wait unread in their sockets, and would then look alone one after the other. So a write is
 * alone when a single connection has sent requests in the current and the previous window of
 * WINDOW_MS (HTTP/1.1 clients do not send a second request on a connection before the answer to the
 * first; one that pipelines is served in order all the same).
 */
export class RequestTraffic {
  private current = new Set<object>();
  private previous = new Set<object>();
  private windowStart = -Infinity;

  /** @param now the clock, in milliseconds (tests pass their own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A request began on `connection` (its socket). */
  begin(connection: object): void {
    const now = this.now();
    if (now - this.windowStart > WINDOW_MS) {
      this.previous = now - this.windowStart > 2 * WINDOW_MS ? new Set() : this.current;
      this.current = new Set();
      this.windowStart = now;
    }
    this.current.add(connection);
  }

  /** Whether one connection alone has sent requests lately. */
  alone(): boolean {
    if (this.current.size > 1 || this.previous.size > 1) return false;
    const [a] = this.current;
    const [b] = this.previous;
    return a === undefined || b === undefined || a === b;
  }
}

/** The window in which the connections that sent requests are counted, in milliseconds. */
const WINDOW_MS = 100;

/**
 * Who is calling the data API right now, to tell a lone writer (one client sending one request at a
 * time) from concurrent ones: a lone write may sync its commit at once on the event loop instead of
 * sharing a group commit in the thread pool (durability.ts, `durable(alone)`).
 *
 * In-flight requests alone would not tell: while a sync blocks the event loop, requests of other
 * clients wait unread in their sockets, and would then look alone one after the other. So a write is
 * alone only when it is the only request in flight and a single connection has sent requests in the
 * current and the previous window of WINDOW_MS.
 */
export class RequestTraffic {
  private inFlight = 0;
  private current = new Set<object>();
  private previous = new Set<object>();
  private windowStart = -Infinity;

  /** @param now the clock, in milliseconds (tests pass their own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A request began on `connection` (its socket). Pair with `end()`. */
  begin(connection: object): void {
    this.inFlight++;
    const now = this.now();
    if (now - this.windowStart > WINDOW_MS) {
      this.previous = now - this.windowStart > 2 * WINDOW_MS ? new Set() : this.current;
      this.current = new Set();
      this.windowStart = now;
    }
    this.current.add(connection);
  }

  /** A request was answered (or its connection closed). */
  end(): void {
    this.inFlight--;
  }

  /** Whether the one request in flight is the only traffic there has been lately. */
  alone(): boolean {
    if (this.inFlight !== 1 || this.current.size > 1 || this.previous.size > 1) return false;
    const [a] = this.current;
    const [b] = this.previous;
    return a === undefined || b === undefined || a === b;
  }
}

/**
 * RequestTraffic (src/data/rest/traffic.ts): when a data API write counts as alone, so that its
 * commit may be synced at once on the event loop (durability.ts).
 */
import { describe, expect, it } from 'vitest';
import { RequestTraffic } from '../src/data/rest/traffic.js';

/** A clock the test moves by hand, in milliseconds. */
const clock = () => {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('RequestTraffic', () => {
  it('one client sending one request at a time is alone', () => {
    const traffic = new RequestTraffic();
    const connection = {};
    for (let i = 0; i < 5; i++) {
      traffic.begin(connection);
      expect(traffic.alone()).toBe(true);
    }
  });

  it('clients taking turns are not alone; after a window without the other, or a quiet spell, one client is again', () => {
    const time = clock();
    const traffic = new RequestTraffic(time.now);
    const first = {};
    const second = {};
    traffic.begin(first);
    traffic.begin(second);
    expect(traffic.alone()).toBe(false);
    // The other client is still counted in the next window.
    time.advance(120);
    traffic.begin(first);
    expect(traffic.alone()).toBe(false);
    // A window without the other client: alone again.
    time.advance(120);
    traffic.begin(first);
    expect(traffic.alone()).toBe(true);
    // After a long quiet spell, whoever comes first is alone.
    time.advance(10_000);
    traffic.begin(second);
    expect(traffic.alone()).toBe(true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { DestinationCache } from './destinations.ts';
import { createTick } from './limiter.ts';
import { EngineMetrics } from './metrics.ts';
import { Pacer } from './pacer.ts';
import { MemoryPacing } from './pacing.ts';
import type { Claim, ClaimedDelivery, Destination, Store } from './store.ts';

const T0 = 1_700_000_000_000;

/** A destination at `limit` a second; only what a tick reads of it matters here. */
function destination(limit: number): Destination {
  return {
    id: 'dst_1',
    rateLimit: { limit, period: 'second' },
    maxConcurrency: null,
    adaptive: false,
    ordering: 'none',
    state: 'active',
    health: { state: 'healthy' },
  } as unknown as Destination;
}

function delivery(n: number): ClaimedDelivery {
  return { id: `dlv_${n}`, destinationId: 'dst_1' } as unknown as ClaimedDelivery;
}

/**
 * One destination's ticks over an in-memory pace and a store that hands out what `due` holds,
 * on a clock the test moves.
 */
function rig(limit: number) {
  let now = T0;
  const due: ClaimedDelivery[] = [];
  const published: string[] = [];
  const store = {
    async claimDue(_id: string, max: number): Promise<Claim> {
      return { deliveries: due.splice(0, max), nextPendingAt: null } as Claim;
    },
  } as unknown as Store;
  const target = destination(limit);
  const destinations = { get: async () => target } as unknown as DestinationCache;
  const pacing = new MemoryPacing(new Pacer({ marginMs: 25, arrivalBoundMs: 250 }));
  const metrics = new EngineMetrics(
    new Registry(),
    () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
    async () => 0,
  );
  const tick = createTick({
    store,
    destinations,
    pacing,
    publisher: { publish: async (_id, ds) => void published.push(...ds.map((d) => d.id)) },
    metrics,
    clock: () => now,
  });
  /** A published delivery's request starts now and is answered 5 ms later. */
  const send = async (): Promise<void> => {
    const pace = await pacing.start('dst_1', 'dlv', 1_000, 10_000, now);
    await pace.finished(now + 5);
  };
  return {
    tick: (at: number) => tick('dst_1', at),
    due,
    published,
    send,
    at: (t: number) => {
      now = t;
    },
  };
}

describe('tick', () => {
  it('plans the next run an interval on when everything due went out, though a send is in the window', async () => {
    const r = rig(10);
    r.due.push(delivery(1));
    assert.equal(await r.tick(T0), T0 + 1_000, 'a lone event: the next run an interval on');
    await r.send();
    // 500 ms later a second event wakes the destination: one send is in its window, so the
    // window term (10 − 1) is below the per-run one (10), yet it held nothing back.
    r.at(T0 + 500);
    r.due.push(delivery(2));
    assert.equal(await r.tick(T0 + 500), T0 + 1_500, 'not 10 ms later: nothing waits for the window');
    assert.deepEqual(r.published, ['dlv_1', 'dlv_2']);
  });

  it('plans the next run for when the window has room when the window held work back', async () => {
    const r = rig(2);
    r.due.push(delivery(1), delivery(2));
    // A full run: an interval on, and not before the two leave the window (+ the 25 ms margin).
    assert.equal(await r.tick(T0), T0 + 1_025);
    await r.send();
    await r.send();
    r.at(T0 + 500);
    r.due.push(delivery(3));
    // Two sends at T0 (answered at T0 + 5) fill the window until T0 + 5 + 1000 + margin.
    const next = await r.tick(T0 + 500);
    assert.deepEqual(r.published, ['dlv_1', 'dlv_2'], 'the third waits for the window');
    assert.ok(
      next !== null && next >= T0 + 1_000 && next <= T0 + 1_100,
      `the next run at the room time: ${next}`,
    );
  });
});

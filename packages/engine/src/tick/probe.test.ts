import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY } from '@sluice/core';
import type { ClaimedDelivery, Destination, ProbeClaim, Store } from '@sluice/store';
import { claimedDelivery, newDestination } from '@sluice/store/conformance';
import { Registry } from 'prom-client';
import type { DestinationCache } from '../destination-cache.ts';
import { EngineMetrics } from '../ops/metrics.ts';
import { MemoryPacing, Pacer } from '../pace/memory-pacing.ts';
import { PROBE_HOLD_MARGIN_MS, PROBE_RECHECK_MS, probeTick } from './probe.ts';

const PERIOD_MS = 1_000;
const MARGIN_MS = 5;

const suspended: Destination = {
  ...newDestination('ten_1', { id: 'dst_1', rateLimit: { limit: 3, period: 'second' } }),
  state: 'active',
  disabledReason: null,
  createdAt: 0,
  updatedAt: 0,
  health: { ...HEALTHY, state: 'suspended', nextProbeAt: 0 },
};

/** A probe tick over a memory pace and a store that always has one pending delivery. */
function setup() {
  const pacing = new MemoryPacing(new Pacer({ marginMs: MARGIN_MS, arrivalBoundMs: 250 }));
  const claims: { now: number; holdUntil: number }[] = [];
  const published: ClaimedDelivery[][] = [];
  const store = {
    claimProbe: async (_id: string, now: number, holdUntil: number): Promise<ProbeClaim> => {
      claims.push({ now, holdUntil });
      return {
        deliveries: [claimedDelivery(`dlv_${claims.length}`, { destinationId: suspended.id })],
        nextPendingAt: now,
        nextProbeAt: holdUntil,
      };
    },
  } as unknown as Store;
  const metrics = new EngineMetrics(
    new Registry(),
    () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
    async () => null,
  );
  const deps = {
    store,
    destinations: { refresh: async () => undefined } as unknown as DestinationCache,
    pacing,
    publisher: { publish: async (_id: string, d: ClaimedDelivery[]) => void published.push(d) },
    metrics,
  };
  /** `n` requests that started at `at`, answered at once, and the failures of the circuit. */
  const sent = async (n: number, at: number) => {
    for (let i = 0; i < n; i++) {
      await pacing.published(
        suspended.id,
        [`old_${at}_${i}`],
        { periodMs: PERIOD_MS, limit: 3, burst: null },
        at,
      );
      const pace = await pacing.start(suspended.id, `old_${at}_${i}`, PERIOD_MS, 10_000, at);
      await pace?.finished(at);
    }
  };
  return { deps, claims, published, sent, pacing };
}

describe('the probe tick of a suspended destination', () => {
  it('waits while the failures that opened the circuit still fill the window, then probes once', async () => {
    const { deps, claims, published, sent } = setup();
    await sent(3, 0); // the limit's worth of failures, answered at 0

    const early = await probeTick(deps, suspended, 100);
    assert.equal(claims.length, 0, 'no probe claimed while the window is full');
    assert.equal(published.length, 0);
    // Not a busy loop: the next look is when the window frees a slot.
    assert.equal(early, PERIOD_MS + MARGIN_MS);

    const due = early as number;
    const next = await probeTick(deps, suspended, due);
    assert.equal(claims.length, 1, 'one probe once the window has room');
    assert.deepEqual(
      published.map((d) => d.map((x) => x.id)),
      [['dlv_1']],
    );
    assert.equal(next, due + suspended.timeoutMs + PROBE_HOLD_MARGIN_MS, 'then sleeps until its outcome');
  });

  it('probes at once when the window has room', async () => {
    const { deps, claims, sent } = setup();
    await sent(2, 0);
    await probeTick(deps, suspended, 100);
    assert.equal(claims.length, 1);
  });

  it('waits for requests still out, and counts the probe in the window', async () => {
    const { deps, claims, pacing } = setup();
    await pacing.published(suspended.id, ['out'], { periodMs: PERIOD_MS, limit: 3, burst: null }, 0);
    assert.equal(await probeTick(deps, suspended, 10), 10 + PROBE_RECHECK_MS);
    assert.equal(claims.length, 0, 'no probe while a request is still queued');

    const { deps: d2, pacing: p2 } = setup();
    await probeTick(d2, suspended, 10);
    const counts = await p2.read(suspended.id, PERIOD_MS, 10);
    assert.equal(counts.queued, 1, 'the probe is counted as published');
  });
});

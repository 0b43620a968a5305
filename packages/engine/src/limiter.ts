/**
 * One tick of the rate limiter for one destination (DESIGN flow 2):
 *
 *   1. read the live limit;
 *   2. allow = decideTick(...) — the per-run, window and concurrency terms;
 *   3. claim up to `allow` due deliveries, oldest first (a fifo destination: by sequence), which
 *      numbers the first-time ones (docs/adr/0006), learning when the next one left is due;
 *      count them against the window and publish them;
 *   4. when fewer were due than allowed and nothing is pending or queued: shut down (return
 *      null: the schedule drops the entry unless a wake arrived meanwhile);
 *   5. otherwise return when the next tick is due.
 */

import { claimOrder, concurrencyCap, decideTick, nextTickAt, ratePlan } from '@sluice/core';
import type { DestinationCache } from './destinations.ts';
import type { EngineMetrics } from './metrics.ts';
import type { TickPacing } from './pacing.ts';
import { probeTick } from './probe.ts';
import type { ClaimedDelivery, Store } from './store.ts';

/** The delivery queue, as the rate limiter uses it. */
export interface Publisher {
  publish(destinationId: string, deliveries: ClaimedDelivery[]): Promise<void>;
}

export interface LimiterDeps {
  store: Store;
  destinations: DestinationCache;
  pacing: TickPacing;
  publisher: Publisher;
  metrics: EngineMetrics;
  clock: () => number;
}

export function createTick(deps: LimiterDeps) {
  const { store, destinations, pacing, publisher, metrics, clock } = deps;
  return async function tick(destinationId: string, due: number): Promise<number | null> {
    const now = clock();
    metrics.tickLag.observe(Math.max(0, now - due) / 1_000);
    const destination = await destinations.get(destinationId);
    if (destination === undefined || destination.state !== 'active') {
      // Paused, disabled or deleted: its pending deliveries wait in the store; resume wakes it.
      metrics.ticks.inc({ result: 'inactive' });
      return null;
    }
    // The circuit is open: one probe when it is time, nothing else (docs/adr/0007).
    if (destination.health.state === 'suspended') return probeTick(deps, destination, now);
    const plan = ratePlan(destination.rateLimit);
    const counts = await pacing.read(destinationId, plan.periodMs, now);
    const { allow, limitedBy } = decideTick({
      plan,
      stillInQueue: counts.queued,
      sentInWindow: counts.sentInWindow,
      inFlight: counts.inFlight,
      // A fifo destination: one request at a time, claimed in sequence order (core/ordering.ts).
      maxConcurrency: concurrencyCap(destination.ordering, destination.maxConcurrency),
    });
    const claim =
      allow > 0 ? await store.claimDue(destinationId, allow, now, claimOrder(destination.ordering)) : null;
    const claimed = claim?.deliveries ?? [];
    // Counted before publishing (an over-count only slows the destination), and in the same
    // step: when the window next has room, with these counted.
    const roomAt = await pacing.published(
      destinationId,
      claimed.map((d) => d.id),
      plan,
      now,
    );
    if (claimed.length > 0) await publisher.publish(destinationId, claimed);
    const roomForMore = claim !== null && claimed.length < allow;
    pacing.noteRoom(destinationId, roomForMore);
    const next = nextTickAt(due, now, plan, roomAt, limitedBy);
    if (claim === null || !roomForMore) {
      metrics.ticks.inc({ result: allow > 0 ? 'published' : 'short_circuit' });
      return next;
    }
    // Everything due went out: is anything left for later?
    if (claim.nextPendingAt === null && counts.queued + claimed.length === 0) {
      metrics.ticks.inc({ result: 'idle' });
      return null;
    }
    metrics.ticks.inc({ result: claimed.length > 0 ? 'published' : 'short_circuit' });
    return claim.nextPendingAt === null ? next : Math.max(next, claim.nextPendingAt);
  };
}

/**
 * One tick of the rate limiter for one destination (DESIGN flow 2):
 *
 *   1. read the live limit;
 *   2. allow = decideTick(...) — the per-run, window and concurrency terms;
 *   3. claim up to `allow` due deliveries, oldest first, and publish them;
 *   4. when fewer were due than allowed and nothing is pending or queued: shut down (return
 *      null: the schedule drops the entry unless a wake arrived meanwhile);
 *   5. otherwise return when the next tick is due.
 */

import { decideTick, nextTickAt, ratePlan } from '@sluice/core';
import type { DestinationCache } from './destinations.ts';
import type { EngineMetrics } from './metrics.ts';
import type { Pacer } from './pacer.ts';
import type { ClaimedDelivery, Destination, Store } from './store.ts';

export interface Publisher {
  publish(destination: Destination, deliveries: ClaimedDelivery[]): void;
}

export interface LimiterDeps {
  store: Store;
  destinations: DestinationCache;
  pacer: Pacer;
  publisher: Publisher;
  metrics: EngineMetrics;
  clock: () => number;
}

export function createTick(deps: LimiterDeps) {
  const { store, destinations, pacer, publisher, metrics, clock } = deps;
  return async function tick(destinationId: string, due: number): Promise<number | null> {
    const now = clock();
    metrics.tickLag.observe(Math.max(0, now - due) / 1_000);
    const destination = await destinations.get(destinationId);
    if (destination === undefined || destination.state !== 'active') {
      // Paused, disabled or deleted: its pending deliveries wait in the store; resume wakes it.
      metrics.ticks.inc({ result: 'inactive' });
      return null;
    }
    const plan = ratePlan(destination.rateLimit);
    const pace = pacer.of(destinationId, plan.periodMs);
    const { allow, limitedBy } = decideTick({
      plan,
      stillInQueue: pace.queued,
      sentInWindow: pace.window.count(now),
      inFlight: pace.inFlight,
      maxConcurrency: destination.maxConcurrency,
    });
    const claimed = allow > 0 ? await store.claimDue(destinationId, allow, now) : [];
    if (claimed.length > 0) {
      pace.queued += claimed.length;
      publisher.publish(destination, claimed);
    }
    pace.roomForMore = allow > 0 && claimed.length < allow;
    const next = nextTickAt(due, now, plan, pace.window.roomAt(now, plan.limit - 1, pace.queued), limitedBy);
    if (!pace.roomForMore) {
      metrics.ticks.inc({ result: allow > 0 ? 'published' : 'short_circuit' });
      return next;
    }
    // Everything due went out: is anything left for later?
    const work = await store.destinationWork(destinationId);
    if (work.nextPendingAt === null && pace.queued === 0) {
      metrics.ticks.inc({ result: 'idle' });
      return null;
    }
    metrics.ticks.inc({ result: claimed.length > 0 ? 'published' : 'short_circuit' });
    return work.nextPendingAt === null ? next : Math.max(next, work.nextPendingAt);
  };
}

/**
 * One tick of the rate limiter for one destination (docs/design.md, flow 2):
 *
 *   1. read the live limit, and the pace (with adaptive pacing, the effective limit in it);
 *   2. allow = decideTick(...) — the per-run, window and concurrency terms (the user's cap and
 *      the fair bound on requests in flight, docs/adr/0014), and the bucket
 *      and a hold where a burst or adaptive pacing asks for them (docs/adr/0008); held back
 *      by its window alone, what the window frees within the lead, each request to start
 *      when its slot frees (publishAhead, docs/adr/0012);
 *   3. claim up to `allow` due deliveries, oldest first (a fifo destination: by sequence), which
 *      numbers the first-time ones (docs/adr/0006), learning when the next one left is due;
 *      count them against the window and publish them;
 *   4. when fewer were due than allowed and nothing is pending for later: shut down (return
 *      null: the schedule drops the entry unless a wake arrived meanwhile), though what it
 *      published may still be queued or in flight — what follows wakes the destination;
 *   5. otherwise return when the next tick is due.
 */

import {
  bucketRoomAt,
  bucketTokens,
  claimOrder,
  concurrencyCap,
  decideTick,
  fairRecheckAt,
  inFlightBound,
  MIN_TICK_GAP_MS,
  nextTickAt,
  PERIOD_MS,
  publishAhead,
  ratePlan,
  roomBatch,
  scaledRateLimit,
} from '@sluice/core';
import type { ClaimedDelivery, Store } from '@sluice/store';
import type { DestinationCache } from '../destination-cache.ts';
import type { EngineMetrics } from '../ops/metrics.ts';
import { paceLimit } from '../pace/pace-limit.ts';
import type { TickPacing } from '../pace/pacing.ts';
import { probeTick } from './probe.ts';

/** The delivery queue, as the rate limiter uses it. */
export interface Publisher {
  /** `tenantId`: the destination's tenant (the delivery queue keeps a job to one tenant). */
  publish(destinationId: string, deliveries: ClaimedDelivery[], tenantId?: string): Promise<void>;
}

export interface TickDeps {
  store: Store;
  destinations: DestinationCache;
  pacing: TickPacing;
  publisher: Publisher;
  metrics: EngineMetrics;
  clock: () => number;
  /** How long before its window has room a tick runs (`SLUICE_TICK_LEAD_MS`; 0: never ahead). */
  leadMs: number;
  /**
   * The operator's ceiling on one destination's requests in flight
   * (`SLUICE_DESTINATION_MAX_IN_FLIGHT`, docs/adr/0014); absent: no fair bound.
   */
  maxInFlight?: number | undefined;
  /**
   * Whether the tenant's share of the delivery slots is held by requests that are not quick
   * wherever its deliveries could run (core/tenant-share.ts): the single box's pool, every
   * distributed worker. Its destinations' ticks then publish nothing and look again after
   * TENANT_HELD_RECHECK_MS; absent: never held back here (the pools still keep to the shares).
   */
  tenantHeld?: ((tenantId: string) => boolean) | undefined;
}

/** How soon a tick held back for its tenant's share looks again. */
export const TENANT_HELD_RECHECK_MS = 500;

export function createTick(deps: TickDeps) {
  const { store, destinations, pacing, publisher, metrics, clock } = deps;
  const lead = deps.leadMs;
  /**
   * `fence`, where the schedule leases ticks (distributed): the tick's current lease token,
   * checked where its deliveries are counted (`TickPacing.published`).
   */
  return async function tick(
    destinationId: string,
    due: number,
    fence?: () => Promise<string>,
  ): Promise<number | null> {
    const now = clock();
    metrics.tickLag.observe(Math.max(0, now - due) / 1_000);
    const destination = await destinations.get(destinationId);
    if (destination === undefined || destination.state !== 'active') {
      // Paused, disabled or deleted: its pending deliveries wait in the store; resume wakes it.
      metrics.ticks.inc({ result: 'inactive' });
      return null;
    }
    // The circuit is open: one probe when it is time, nothing else (docs/adr/0007).
    if (destination.health.state === 'suspended') return probeTick(deps, destination, now, fence);
    // Its tenant's slots hang everywhere: what it published now would only wait, or be handed
    // back, on cores the other tenants need; its deliveries stay pending in the store.
    if (deps.tenantHeld?.(destination.tenantId) === true) {
      metrics.ticks.inc({ result: 'tenant_held' });
      return now + TENANT_HELD_RECHECK_MS;
    }
    const periodMs = PERIOD_MS[destination.rateLimit.period];
    const counts = await pacing.read(destinationId, periodMs, now, now + lead);
    const effective = paceLimit(destination, counts.adaptive, now);
    const plan = ratePlan(scaledRateLimit(destination.rateLimit, effective.limit));
    const margin = pacing.windowMarginMs;
    // A fifo destination: one request at a time, claimed in sequence order (core/ordering.ts).
    const maxConcurrency = concurrencyCap(destination.ordering, destination.maxConcurrency);
    // How long its requests in flight have gone without an answer from it.
    const stalledMs =
      counts.inFlightSince === null
        ? 0
        : Math.max(0, now - Math.max(counts.inFlightSince, counts.answeredAt ?? 0));
    const fair =
      deps.maxInFlight === undefined
        ? null
        : inFlightBound({
            plan,
            latencyMs: counts.latencyMs,
            stalledMs,
            inFlight: counts.inFlight,
            maxConcurrency,
            ceiling: deps.maxInFlight,
          });
    const input = {
      plan,
      stillInQueue: counts.queued,
      sentInWindow: counts.sentInWindow,
      inFlight: counts.inFlight,
      maxConcurrency,
      fairBound: fair?.fair ? fair.bound : undefined,
      bucketTokens: plan.burst === null ? undefined : bucketTokens(plan, counts.bucketTat, now, margin),
      held: effective.holdUntil > now,
    };
    const decision = decideTick(input);
    const ahead = publishAhead(input, decision, counts.leaving);
    const { allow, limitedBy } = ahead ?? decision;
    const claim =
      allow > 0 ? await store.claimDue(destinationId, allow, now, claimOrder(destination.ordering)) : null;
    const claimed = claim?.deliveries ?? [];
    if (ahead !== null) for (const [i, d] of claimed.entries()) d.notBefore = ahead.startsAt[i] as number;
    // Counted before publishing (an over-count only slows the destination), and in the same
    // step: when the window next has room, with these counted.
    // Held back by its window, a backlog waits for a batch of free slots (core/tick.ts).
    // A tick that lost its lease meanwhile is refused here (LeaseLostError) and publishes
    // nothing; what it claimed returns to pending by the sweeper's lease.
    const token = fence === undefined ? undefined : await fence();
    const windowRoomAt = await pacing.published(
      destinationId,
      claimed.map((d) => d.id),
      plan,
      now,
      {
        room: limitedBy === 'window' ? roomBatch(plan) : 1,
        fence: token,
        startsAt: claimed.at(-1)?.notBefore,
      },
    );
    const queuedNow = counts.queued + claimed.length;
    // The window's room is where the next tick publishes ahead of (lead ms before it).
    const roomAt = Math.max(
      windowRoomAt - lead,
      bucketRoomAt(plan, counts.bucketTat, queuedNow, now, margin),
      effective.holdUntil,
    );
    if (claimed.length > 0) await publisher.publish(destinationId, claimed, destination.tenantId);
    const roomForMore = claim !== null && claimed.length < allow;
    pacing.noteRoom(destinationId, roomForMore);
    // With room to spare, no term held work back: the next run is planned as a run (what is
    // pending later is due at `nextPendingAt`, below), not from the window term, which is
    // smaller than the per-run one whenever a send is in the window and would tick again
    // 10 ms later for nothing.
    const planned = nextTickAt(due, now, plan, roomAt, roomForMore ? 'run' : limitedBy);
    // Held by the fair bound before it has answered once: looked at again soon (a fast new
    // receiver answers within ms), then ever less often (a hanging one).
    const next =
      limitedBy === 'fair' && !roomForMore && fair?.latencyMs === null
        ? Math.max(roomAt, fairRecheckAt(now, stalledMs, MIN_TICK_GAP_MS, planned))
        : planned;
    if (limitedBy === 'fair' && !roomForMore) metrics.heldByFairBound.inc();
    if (claim === null || !roomForMore) {
      metrics.ticks.inc({ result: allow > 0 ? 'published' : 'short_circuit' });
      return next;
    }
    // Everything due went out and nothing is pending for later: the destination shuts down
    // now, with what it published still queued or in flight. Whatever follows wakes it
    // itself — new work at its room time, a retry at its due time, a freed concurrency slot,
    // a change of health (completion-policy.ts) — and a job lost with Redis is the sweeper's
    // (flow 5). A tick planned for the run after this one would only find the queue drained:
    // one more tick, claim statement and settle for every event that arrives alone.
    if (claim.nextPendingAt === null) {
      metrics.ticks.inc({ result: claimed.length > 0 ? 'published' : 'idle' });
      return null;
    }
    metrics.ticks.inc({ result: claimed.length > 0 ? 'published' : 'short_circuit' });
    return Math.max(next, claim.nextPendingAt);
  };
}

/**
 * One tick of the rate limiter for one destination (DESIGN flow 2):
 *
 *   1. read the live limit, and the pace (with adaptive pacing, the effective limit in it);
 *   2. allow = decideTick(...) — the per-run, window and concurrency terms, and the bucket
 *      and a hold where a burst or adaptive pacing asks for them (docs/adr/0008); held back
 *      by its window alone, what the window frees within the lead, each request to start
 *      when its slot frees (publishAhead, docs/adr/0012);
 *   3. claim up to `allow` due deliveries, oldest first (a fifo destination: by sequence), which
 *      numbers the first-time ones (docs/adr/0006), learning when the next one left is due;
 *      count them against the window and publish them. Where the pace is read over the network
 *      (`claimBesideRead`), a destination whose last tick was not held back claims a few while
 *      it reads, and gives back what `allow` does not cover;
 *   4. when fewer were due than allowed and nothing is pending or queued: shut down (return
 *      null: the schedule drops the entry unless a wake arrived meanwhile);
 *   5. otherwise return when the next tick is due.
 */

import {
  bucketRoomAt,
  bucketTokens,
  type ClaimOrder,
  claimOrder,
  concurrencyCap,
  decideTick,
  type EffectiveLimit,
  effectiveLimit,
  nextTickAt,
  PERIOD_MS,
  publishAhead,
  ratePlan,
  roomBatch,
  scaledRateLimit,
  TICK_LEAD_MS,
} from '@sluice/core';
import { LRUCache } from 'lru-cache';
import type { DestinationCache } from './destinations.ts';
import type { EngineMetrics } from './metrics.ts';
import type { PaceCounts, TickPacing } from './pacing.ts';
import { probeTick } from './probe.ts';
import type { Claim, ClaimedDelivery, Destination, Store } from './store.ts';

/** The limit a destination is planned with now: its own, or adaptive pacing's effective one. */
export function paceLimit(
  destination: Pick<Destination, 'rateLimit' | 'adaptive'>,
  adaptive: PaceCounts['adaptive'],
  now: number,
): EffectiveLimit {
  const { limit, period } = destination.rateLimit;
  if (!destination.adaptive) return { limit, holdUntil: 0, backingOff: false };
  return effectiveLimit(
    adaptive && { ...adaptive, cutAt: 0, calmSince: 0, ewmaMs: 0, baseMs: 0 },
    limit,
    PERIOD_MS[period],
    now,
  );
}

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
  /** How long before its window has room a tick runs (default TICK_LEAD_MS; 0: never ahead). */
  leadMs?: number | undefined;
  /**
   * Claim beside the pace read (the distributed rate limiter, where both are round trips):
   * a tick of a destination not held back at its last tick here claims up to
   * BESIDE_READ_MAX due deliveries while it reads the pace, instead of after, and returns to
   * pending what `allow` then does not cover. One round trip fewer between an event's wake and
   * its publish; an over-claim is a claim, never a send (only what is counted is published).
   */
  claimBesideRead?: boolean | undefined;
}

/**
 * The most a tick claims beside its read. A trickle has one or two due; a burst claims the
 * rest after the read, as before.
 */
const BESIDE_READ_MAX = 10;

export function createTick(deps: LimiterDeps) {
  const { store, destinations, pacing, publisher, metrics, clock } = deps;
  const lead = deps.leadMs ?? TICK_LEAD_MS;
  /**
   * Destinations whose last tick here was held back (it published all it was allowed, or
   * nothing): a backlog, whose claim beside the read would mostly go back. Forgotten when a
   * tick sends everything due with room to spare; bounded, as a hint may be lost.
   */
  const heldBack = new LRUCache<string, true>({ max: 100_000 });

  /**
   * The claim made beside the read, cut to `allow`: the rest back to pending (still due: the
   * destination's next pending is due now); when it took all it asked for and `allow` is more,
   * the rest claimed now. Null when `allow` is 0, as a tick that claims after its read.
   */
  async function fitClaim(
    destinationId: string,
    got: Claim,
    asked: number,
    allow: number,
    now: number,
    order: ClaimOrder,
  ): Promise<Claim | null> {
    const kept = got.deliveries.slice(0, Math.max(0, allow));
    const over = got.deliveries.slice(kept.length).map((d) => d.id);
    if (over.length > 0) {
      await store.releaseClaims(over, now);
      metrics.claimsReturned.inc(over.length);
    }
    if (allow <= 0) return null;
    if (got.deliveries.length === asked && allow > asked) {
      const more = await store.claimDue(destinationId, allow - asked, now, order);
      return { deliveries: [...kept, ...more.deliveries], nextPendingAt: more.nextPendingAt };
    }
    return {
      deliveries: kept,
      nextPendingAt: over.length > 0 ? Math.min(now, got.nextPendingAt ?? now) : got.nextPendingAt,
    };
  }

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
    const order = claimOrder(destination.ordering);
    const maxConcurrency = concurrencyCap(destination.ordering, destination.maxConcurrency);
    // No tick allows more than a run of the configured limit (adaptive pacing only lowers it).
    const asked =
      deps.claimBesideRead && !heldBack.has(destinationId)
        ? Math.min(BESIDE_READ_MAX, ratePlan(destination.rateLimit).perRun, maxConcurrency ?? BESIDE_READ_MAX)
        : 0;
    const early = asked > 0 ? store.claimDue(destinationId, asked, now, order) : undefined;
    early?.catch(() => undefined); // awaited below; a failure meanwhile is not unhandled
    let counts: PaceCounts;
    try {
      counts = await pacing.read(destinationId, PERIOD_MS[destination.rateLimit.period], now, now + lead);
    } catch (err) {
      // Nothing counted, nothing published: what it claimed goes back now (else at its lease).
      early
        ?.then((got) =>
          store.releaseClaims(
            got.deliveries.map((d) => d.id),
            now,
          ),
        )
        .catch(() => undefined);
      throw err;
    }
    const effective = paceLimit(destination, counts.adaptive, now);
    const plan = ratePlan(scaledRateLimit(destination.rateLimit, effective.limit));
    const margin = pacing.windowMarginMs;
    const input = {
      plan,
      stillInQueue: counts.queued,
      sentInWindow: counts.sentInWindow,
      inFlight: counts.inFlight,
      // A fifo destination: one request at a time, claimed in sequence order (core/ordering.ts).
      maxConcurrency,
      bucketTokens: plan.burst === null ? undefined : bucketTokens(plan, counts.bucketTat, now, margin),
      held: effective.holdUntil > now,
    };
    const decision = decideTick(input);
    const ahead = publishAhead(input, decision, counts.leaving);
    const { allow, limitedBy } = ahead ?? decision;
    const claim =
      early !== undefined
        ? await fitClaim(destinationId, await early, asked, allow, now, order)
        : allow > 0
          ? await store.claimDue(destinationId, allow, now, order)
          : null;
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
    if (claimed.length > 0) await publisher.publish(destinationId, claimed);
    const roomForMore = claim !== null && claimed.length < allow;
    pacing.noteRoom(destinationId, roomForMore);
    if (roomForMore) heldBack.delete(destinationId);
    else heldBack.set(destinationId, true);
    // Everything due went out with room to spare: no term held work back, so nothing waits
    // for the window to free a slot. New work wakes the destination itself (at its room
    // time); this tick only plans the run after it, which finds the queue drained and shuts
    // down. (The window term is smaller than the per-run one whenever a send is in the
    // window; planning from it would tick again 10 ms later for nothing, once per event.)
    const next = nextTickAt(due, now, plan, roomAt, roomForMore ? 'run' : limitedBy);
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

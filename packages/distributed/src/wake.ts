/**
 * Waking a destination for its work from any process (the API after an ingest, a worker
 * after a release or a freed concurrency slot): a sooner-only wake in the shared schedule at
 * the earliest moment the destination's window has room, so an event under the limit goes
 * out at once and a full window is not re-ticked on every event. A suspended destination's
 * wake waits for its probe (`probeWakeAt`, the rule the single box's Engine follows too).
 */

import { emissionMs, ratePlan, windowCap } from '@sluice/core';
import { type GivenTick, planTick, probeWakeAt } from '@sluice/engine';
import { type ClaimedTick, paceCounts, type WakeRoom } from '@sluice/redis';
import type { Destination } from '@sluice/store';
import type { SharedState } from './shared-state.ts';

type WakeState = Pick<SharedState, 'schedule' | 'destinations' | 'pacing'>;

/** What the wake script needs to find when the destination's window has room. */
function wakeRoom(destination: Destination, pacing: SharedState['pacing']): WakeRoom {
  const plan = ratePlan(destination.rateLimit);
  return {
    // The window's cap: a burst allowance lets the window hold up to the burst.
    limit: windowCap(plan),
    periodMs: plan.periodMs,
    windowMarginMs: pacing.windowMarginMs,
    queuedExpiryMs: pacing.queuedExpiryMs,
    bucket: plan.burst === null ? undefined : { burst: plan.burst, emissionMs: emissionMs(plan) },
    adaptiveLimit: destination.adaptive ? plan.limit : undefined,
  };
}

/**
 * Schedules a tick at the earliest moment the destination may have room, in one round trip
 * (`wakeForWork-7.lua`). With `tickLeaseMs`, a tick due now with none running is claimed for
 * the caller instead (docs/adr/0013), under that lease: run it, then settle.
 */
export async function wakeForWork(
  shared: WakeState,
  destinationId: string,
  now: number,
  tickLeaseMs = 0,
): Promise<ClaimedTick | null> {
  const { schedule, destinations, pacing } = shared;
  const destination = await destinations.get(destinationId);
  if (destination === undefined || destination.state !== 'active') return null;
  const probeAt = probeWakeAt(destination.health, now);
  if (probeAt !== null) {
    // The circuit is open: the work waits for the probe time (docs/adr/0007).
    await schedule.wake(destinationId, probeAt);
    return null;
  }
  const { at, lease } = await schedule.scripts.wakeForWork(
    destinationId,
    now,
    wakeRoom(destination, pacing),
    tickLeaseMs,
  );
  return lease === null ? null : { destinationId, due: at, lease, takenOver: false };
}

/** A tick held around an accept: its lease, its read, and how many deliveries it may take now. */
export interface HeldTick {
  claimed: ClaimedTick;
  read: Omit<GivenTick, 'claim'>;
  allow: number;
}

/**
 * Before an accept (docs/adr/0016): claims the destination's tick when `wakeForWork` would
 * claim it after the accept — active, its circuit closed, room now, no tick running — with
 * the pace a tick reads, and decides as that tick would (`planTick`) how many of the
 * accept's deliveries go out at once. Otherwise changes nothing and answers null.
 */
export async function holdForWork(
  shared: WakeState,
  destinationId: string,
  now: number,
  o: { tickLeaseMs: number; leadMs: number; maxInFlight: number | undefined },
): Promise<HeldTick | null> {
  const { schedule, destinations, pacing } = shared;
  const destination = await destinations.get(destinationId);
  if (destination === undefined || destination.state !== 'active' || destination.health.state === 'suspended')
    return null;
  const { at, lease, pace } = await schedule.scripts.holdForWork(
    destinationId,
    now,
    wakeRoom(destination, pacing),
    o.tickLeaseMs,
    now + o.leadMs,
  );
  if (lease === null) return null;
  const counts = paceCounts(pace);
  const { allow, ahead } = planTick(
    { maxInFlight: o.maxInFlight, windowMarginMs: pacing.windowMarginMs },
    destination,
    counts,
    now,
  );
  return {
    claimed: { destinationId, due: at, lease, takenOver: false },
    read: { now, counts },
    // Published ahead of its window's room, a run waits for its slots: the tick claims it.
    allow: ahead === null ? allow : 0,
  };
}

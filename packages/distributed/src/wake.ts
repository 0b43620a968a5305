/**
 * Waking a destination for its work from any process (the API after an ingest, a worker
 * after a release or a freed concurrency slot): a sooner-only wake in the shared schedule at
 * the earliest moment the destination's window has room, so an event under the limit goes
 * out at once and a full window is not re-ticked on every event. A suspended destination's
 * wake waits for its probe (`probeWakeAt`, the rule the single box's Engine follows too).
 */

import { emissionMs, ratePlan, windowCap } from '@sluice/core';
import { probeWakeAt } from '@sluice/engine';
import type { ClaimedTick } from '@sluice/redis';
import type { SharedState } from './shared-state.ts';

/**
 * Schedules a tick at the earliest moment the destination may have room, in one round trip
 * (`wakeForWork-6.lua`). With `tickLeaseMs`, a tick due now with none running is claimed for
 * the caller instead (docs/adr/0013), under that lease: run it, then settle.
 */
export async function wakeForWork(
  shared: Pick<SharedState, 'schedule' | 'destinations' | 'pacing'>,
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
  const plan = ratePlan(destination.rateLimit);
  const { windowMarginMs, queuedExpiryMs } = pacing;
  const { at, lease } = await schedule.scripts.wakeForWork(
    destinationId,
    now,
    {
      // The window's cap: a burst allowance lets the window hold up to the burst.
      limit: windowCap(plan),
      periodMs: plan.periodMs,
      windowMarginMs,
      queuedExpiryMs,
      bucket: plan.burst === null ? undefined : { burst: plan.burst, emissionMs: emissionMs(plan) },
      adaptiveLimit: destination.adaptive ? plan.limit : undefined,
    },
    tickLeaseMs,
  );
  return lease === null ? null : { destinationId, due: at, lease, takenOver: false };
}

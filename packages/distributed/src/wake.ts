/**
 * The distributed shape's adapter beneath the wake both shapes follow (`wakeForWork`,
 * packages/engine/src/tick/wake.ts), from any process: the API after an ingest, a worker
 * after a release or a freed concurrency slot. The destination is read through the cache
 * first: a paused, disabled or deleted one has nothing to wake (a resume wakes it). The
 * window's room is found in Redis, in the round trip that makes the sooner-only wake
 * (`wakeForWork-6.lua`).
 */

import { emissionMs, ratePlan, windowCap } from '@sluice/core';
import { type WakePorts, wakeForWork } from '@sluice/engine';
import type { ClaimedTick } from '@sluice/redis';
import type { RedisState } from './redis-state.ts';

/**
 * Wakes the destination for new work, in one round trip. With `tickLeaseMs`, a tick due now
 * with none running is claimed for the caller instead (docs/adr/0013), under that lease: run
 * it, then settle.
 */
export async function wakeInRedis(
  redisState: Pick<RedisState, 'schedule' | 'destinations' | 'pacing'>,
  destinationId: string,
  now: number,
  tickLeaseMs = 0,
): Promise<ClaimedTick | null> {
  const { schedule, destinations, pacing } = redisState;
  const destination = await destinations.get(destinationId);
  if (destination === undefined || destination.state !== 'active') return null;
  const ports: WakePorts<Promise<ClaimedTick | null>> = {
    async wake(id, at) {
      await schedule.wake(id, at);
      return null;
    },
    async wakeAtRoom(id) {
      const plan = ratePlan(destination.rateLimit);
      const { windowMarginMs, queuedExpiryMs } = pacing;
      const { at, lease } = await schedule.scripts.wakeForWork(
        id,
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
      return lease === null ? null : { destinationId: id, due: at, lease, takenOver: false };
    },
  };
  return wakeForWork(destinationId, destination, now, ports);
}

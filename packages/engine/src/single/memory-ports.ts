/**
 * The single box's adapters beneath the policies both shapes share — the wake
 * (tick/wake.ts) — over the schedule and the pace it keeps in memory.
 */

import { ratePlan, scaledRateLimit } from '@sluice/core';
import type { Destination } from '@sluice/store';
import type { DestinationPace, Pacer } from '../pace/memory-pacing.ts';
import { paceLimit } from '../pace/pace-limit.ts';
import type { MemorySchedule } from '../tick/memory-schedule.ts';
import type { WakePorts } from '../tick/wake.ts';

/** What the single box's adapters act on. */
export interface MemoryState {
  schedule: MemorySchedule;
  pacer: Pacer;
}

/** When a tick could next publish one more, at the limit it would plan with. */
export function roomAt(destination: Destination, pace: DestinationPace, now: number): number {
  const effective = paceLimit(destination, pace.adaptive, now);
  const plan = ratePlan(scaledRateLimit(destination.rateLimit, effective.limit));
  return pace.roomAt(now, plan, effective.holdUntil);
}

/** Wakes in the schedule at once: the tick is scheduled before the API answers. */
export function memoryWakePorts({ schedule, pacer }: MemoryState): WakePorts<void> {
  return {
    wake: (destinationId, at) => schedule.wake(destinationId, at),
    wakeAtRoom(destinationId, destination, now) {
      const pace = pacer.peek(destinationId);
      // No copy or no pace to find the room with: now (the tick reads both).
      if (pace === undefined || destination === undefined) return schedule.wake(destinationId, now);
      // Scheduled, and its last tick left no room for more: that tick already waits for the room.
      if (schedule.isScheduled(destinationId) && !pace.roomForMore) return;
      schedule.wake(destinationId, roomAt(destination, pace, now));
    },
  };
}

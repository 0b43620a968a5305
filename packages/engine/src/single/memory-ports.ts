/**
 * The single box's adapters beneath the policies both shapes share — the wake
 * (tick/wake.ts), the rebuild at start (sweep/recovery.ts) and the sweep (sweep/sweeper.ts) —
 * over the schedule and the pace it keeps in memory and the claims its own queue holds.
 */

import { emissionMs, PERIOD_MS, ratePlan, scaledRateLimit, tatFromArrivals } from '@sluice/core';
import type { Destination, Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { DestinationCache } from '../destination-cache.ts';
import type { EngineMetrics } from '../ops/metrics.ts';
import type { DestinationPace, Pacer } from '../pace/memory-pacing.ts';
import { paceLimit } from '../pace/pace-limit.ts';
import type { RecoveryPorts } from '../sweep/recovery.ts';
import type { SweepPorts } from '../sweep/sweeper.ts';
import type { MemorySchedule } from '../tick/memory-schedule.ts';
import type { WakePorts } from '../tick/wake.ts';

/** What the single box's adapters act on. */
export interface MemoryState {
  store: Store;
  schedule: MemorySchedule;
  pacer: Pacer;
  destinations: DestinationCache;
  clock: () => number;
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

/**
 * At start nothing in the process holds a claim: every one goes back to pending, counted as
 * an attempt made — any may have been sent, and the single box records no request's start
 * (docs/performance.md says what that would cost), so a repeat is numbered one higher
 * (docs/operations.md, "What a killed process leaves").
 */
export function memoryRecoveryPorts({ store, schedule, pacer, destinations }: MemoryState): RecoveryPorts {
  return {
    store,
    destinations,
    requeueClaims: (now) => store.requeue(Number.POSITIVE_INFINITY, new Set(), now, true),
    restorePace(destinationId, destination, sends) {
      if (destination === undefined) return;
      const pace = pacer.of(destinationId, PERIOD_MS[destination.rateLimit.period]);
      for (const { startedAt, finishedAt } of sends)
        pace.window.finish(pace.window.start(startedAt), finishedAt);
      if (destination.rateLimit.burst === undefined) return;
      const plan = ratePlan(destination.rateLimit);
      pace.bucket.tat = tatFromArrivals(
        plan,
        sends.map((s) => s.finishedAt),
      );
      pace.bucket.emissionMs = emissionMs(plan);
    },
    wake: (destinationId, at) => schedule.wake(destinationId, at),
  };
}

/** What the single box's sweep needs besides its state. */
export interface MemorySweepSettings {
  /** The claims its delivery queue holds. */
  live: ReadonlySet<string>;
  /** A claim that nothing holds returns to pending after this (`SLUICE_LEASE_MS`). */
  leaseMs: number;
  logger: Logger;
  metrics: EngineMetrics;
}

/**
 * The schedule answers at once, and the listing is not read again. A claim not in the
 * process's queue returns to pending past the claim lease; the pace of a destination with no
 * schedule entry and nothing left in it is forgotten.
 */
export function memorySweepPorts(
  { store, schedule, pacer, clock }: MemoryState,
  { live, leaseMs, logger, metrics }: MemorySweepSettings,
): SweepPorts {
  const isScheduled = (destinationId: string) => schedule.isScheduled(destinationId);
  return {
    store,
    logger,
    metrics,
    clock,
    scheduledAmong: (destinationIds) => new Set(destinationIds.filter(isScheduled)),
    wake: (destinationId, at) => schedule.wake(destinationId, at),
    requeueStale: (now) => store.requeue(now - leaseMs, live, now),
    forgetIdle: (now) => pacer.collect(now, isScheduled),
  };
}

/**
 * The distributed shape's adapters beneath the sweep and the rebuild both shapes follow
 * (packages/engine/src/sweep/): Postgres is the truth, Redis a cache of it.
 *
 * - The rebuild (`recoverIfLost`) runs when Redis lost its state in whole or in part (`epoch`
 *   or a shard's marker is gone: FLUSHALL, a restart without persistence, a cluster node back
 *   empty; @sluice/redis state-built.ts), before any tick runs and any request starts: one
 *   replica claims it (SET NX), the others wait for `epoch` to say 'ready'. It also runs
 *   first in every sweep.
 * - A claim counts as held while its job is in the delivery queue: a job completes only once
 *   its outcomes are written, and a job whose worker died is handed to another worker by
 *   BullMQ (docs/operations.md, "What a killed process leaves"). One in no job returns to
 *   pending once claimed longer than `unstartedLeaseMs` ago and its destination runs no tick
 *   now (a tick that died before publishing it, a publish that failed, a job that could not
 *   start); `leaseMs` is the backstop: past it, it returns even while its destination's tick
 *   runs. The rebuild returns every claim in no job.
 * - Which destinations are scheduled is asked of Redis for all of them in a few round trips
 *   (one each kept a rate limiter busy: docs/performance.md), and a tick elsewhere may take
 *   the work in between: the sweep reads it again.
 */

import { ratePlan } from '@sluice/core';
import {
  type DestinationCache,
  type EngineMetrics,
  type Recovered,
  type RecoveryPorts,
  recoverFromStore,
  Sweeper,
  type SweepPorts,
  sweepOnce,
} from '@sluice/engine';
import {
  type BullPublisher,
  type Keys,
  markStateBuilt,
  markStateRebuilding,
  type RedisClient,
  type RedisPacing,
  type ScheduleClient,
  stateBuilt,
} from '@sluice/redis';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';

/** How long a replica's claim to rebuild holds the others off, should it die rebuilding. */
const REBUILD_CLAIM_MS = 60_000;

export interface DistributedSweeperDeps {
  store: Store;
  redis: RedisClient;
  keys: Keys;
  schedule: ScheduleClient;
  pacing: RedisPacing;
  publisher: BullPublisher;
  destinations: DestinationCache;
  logger: Logger;
  metrics: EngineMetrics;
  clock: () => number;
  leaseMs: number;
  /** A claim in no job returns after this when no tick of its destination runs (SLUICE_UNSTARTED_LEASE_MS). */
  unstartedLeaseMs: number;
}

export class DistributedSweeper {
  private readonly deps: DistributedSweeperDeps;
  private readonly loop: Sweeper;
  private readonly recoveryPorts: RecoveryPorts;
  private readonly sweepPorts: SweepPorts;

  constructor(deps: DistributedSweeperDeps) {
    this.deps = deps;
    const { store, schedule, pacing, destinations, logger, metrics, clock, leaseMs, unstartedLeaseMs } = deps;
    this.loop = new Sweeper(() => this.sweep(), logger);
    this.recoveryPorts = {
      store,
      destinations,
      requeueClaims: (now) => this.requeueLost(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, now),
      restorePace: (destinationId, destination, sends) =>
        pacing.restoreSends(
          destinationId,
          sends.map((s) => s.finishedAt),
          destination?.rateLimit.burst === undefined ? undefined : ratePlan(destination.rateLimit),
        ),
      wake: (destinationId, at) => schedule.wake(destinationId, at),
    };
    this.sweepPorts = {
      store,
      logger,
      metrics,
      clock,
      scheduledAmong: (destinationIds) => schedule.scheduledAmong(destinationIds),
      pendingAgain: async (destinationId) => (await store.destinationWork(destinationId)).nextPendingAt,
      wake: (destinationId, at) => schedule.wake(destinationId, at),
      requeueStale: (now) => this.requeueLost(now - Math.min(unstartedLeaseMs, leaseMs), now - leaseMs, now),
    };
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * Returns the deliveries claimed before `unstartedBefore` whose job is no longer in the
   * delivery queue to pending — those of a destination whose tick runs now only if claimed
   * before `claimedBefore` (the tick publishes its claims before it settles). Only those
   * claims' jobs are looked up.
   *
   * Each was counted as queued when its tick published it, and that entry would keep
   * counting — holding its destination back by one, for as long as the entry lives (an
   * hour) — since nothing will start the delivery now. A tick that died after counting a
   * full run and before publishing it would stop its destination for that hour: its
   * deliveries, returned here, could not be claimed again while they still counted. So
   * their entries go too, except where a tick has counted one again since.
   */
  private async requeueLost(
    unstartedBefore: number,
    claimedBefore: number,
    now: number,
  ): Promise<Map<string, number>> {
    const { store, publisher, pacing, schedule } = this.deps;
    const stale = await store.staleClaims(unstartedBefore);
    if (stale.length === 0) return new Map();
    const live = await publisher.liveOf(stale);
    const keep = new Set(live);
    const lost = stale.filter((c) => !live.has(c.id));
    if (lost.length > 0 && unstartedBefore > claimedBefore) {
      const leased = await schedule.leasedAmong([...new Set(lost.map((c) => c.destinationId))], now);
      if (leased.size > 0) {
        const pastLease = new Set((await store.staleClaims(claimedBefore)).map((c) => c.id));
        for (const c of lost) if (leased.has(c.destinationId) && !pastLease.has(c.id)) keep.add(c.id);
      }
    }
    const requeued = await store.requeue(unstartedBefore, keep, now);
    const returned = new Map<string, string[]>();
    for (const { id, destinationId } of stale) {
      if (keep.has(id)) continue;
      const ids = returned.get(destinationId) ?? [];
      ids.push(id);
      returned.set(destinationId, ids);
    }
    for (const [destinationId, ids] of returned) await pacing.forget(destinationId, ids, unstartedBefore);
    return requeued;
  }

  /** Rebuilds the Redis state from the store if it was lost. Returns whether it did. */
  async recoverIfLost(): Promise<boolean> {
    const { redis, keys, schedule, clock, logger, destinations, metrics } = this.deps;
    if (await stateBuilt(redis, keys)) return false;
    const claimed = await redis.set(keys.rebuild(), 'claimed', 'PX', REBUILD_CLAIM_MS, 'NX');
    if (claimed !== 'OK') return false; // another replica rebuilds
    let recovered: Recovered;
    try {
      await markStateRebuilding(redis, keys);
      recovered = await recoverFromStore(this.recoveryPorts, clock());
      // A change announced while Redis was gone never arrived: every destination is read again.
      destinations.clear();
      await markStateBuilt(redis, keys);
    } finally {
      // Released at once, so that a second loss soon after is rebuilt at the next sweep.
      await redis.del(keys.rebuild()).catch(() => undefined);
    }
    // The loops that found the state not ready sleep; the ticks woken above are due now.
    await schedule.kick();
    const { requeued, scheduled } = recovered;
    if (requeued > 0) metrics.repairs.inc({ kind: 'requeued' }, requeued);
    // On a first start there is nothing to repair; after a loss of Redis there may be.
    const level = requeued > 0 || scheduled > 0 ? 'warn' : 'info';
    logger[level]({ requeued, scheduled }, 'built the Redis state from the store');
    return true;
  }

  async sweep(): Promise<void> {
    await this.recoverIfLost();
    await sweepOnce(this.sweepPorts);
  }
}

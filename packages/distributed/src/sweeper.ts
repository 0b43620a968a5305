/**
 * The distributed sweeper (docs/design.md, flow 5): Postgres is the truth, Redis a cache of it.
 *
 * - Redis lost (the `epoch` key is gone: FLUSHALL, a restart without persistence): rebuild
 *   before any tick runs. Deliveries claimed in the store but with no job left are returned
 *   to pending and count as sent now (they may have reached the receiver); the attempts of
 *   the last hour refill the send windows; every destination with pending work is
 *   scheduled; then `epoch` says 'ready'. One replica rebuilds (SET NX); the others wait.
 * - Every sweep: destinations with pending work and no schedule entry are woken (the work
 *   is read again once the schedule was seen empty, so a tick that took it meanwhile is not
 *   taken for a lost wake-up); deliveries claimed longer than `unstartedLeaseMs` ago that are
 *   in no job of the delivery queue and whose destination runs no tick now (a tick that died
 *   before publishing them, a publish that failed, a job that could not start) return to
 *   pending. No job means no request of theirs is under way: a job completes only once its
 *   outcomes are written, and a job whose worker died is handed to another worker by BullMQ
 *   (docs/operations.md, "What a killed process leaves"). `leaseMs` is the backstop: past it,
 *   a claim in no job returns even while its destination's tick runs.
 */

import { PERIOD_MS, ratePlan } from '@sluice/core';
import { type DestinationCache, type EngineMetrics, reportRepairs } from '@sluice/engine';
import type { BullPublisher, Keys, RedisClient, RedisPacing, ScheduleClient } from '@sluice/redis';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';

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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly deps: DistributedSweeperDeps;

  constructor(deps: DistributedSweeperDeps) {
    this.deps = deps;
  }

  start(intervalMs: number): void {
    let sweeping = false;
    this.timer = setInterval(() => {
      // One sweep at a time: one that outlasts the interval is not joined by another.
      if (sweeping) return;
      sweeping = true;
      this.running = this.sweep()
        .catch((err: unknown) => this.deps.logger.error({ err }, 'sweep failed'))
        .finally(() => {
          sweeping = false;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
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
        const old = new Set((await store.staleClaims(claimedBefore)).map((c) => c.id));
        for (const c of lost) if (leased.has(c.destinationId) && !old.has(c.id)) keep.add(c.id);
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
    const { redis, keys, store, pacing, schedule, clock, logger, destinations, metrics } = this.deps;
    if ((await redis.get(keys.epoch())) === 'ready') return false;
    const mine = await redis.set(keys.epoch(), 'rebuilding', 'PX', 60_000, 'NX');
    if (mine !== 'OK') return false; // another replica rebuilds
    const now = clock();
    const requeued = await this.requeueLost(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, now);
    const windows = new Map<string, number[]>();
    for (const a of await store.recentAttempts(now - PERIOD_MS.hour - 60_000)) {
      const list = windows.get(a.destinationId) ?? [];
      list.push(a.finishedAt);
      windows.set(a.destinationId, list);
    }
    for (const [destinationId, count] of requeued) {
      const list = windows.get(destinationId) ?? [];
      for (let i = 0; i < count; i++) list.push(now);
      windows.set(destinationId, list);
    }
    for (const [destinationId, arrivedBy] of windows) {
      const destination = await destinations.get(destinationId);
      const bucket = destination?.rateLimit.burst === undefined ? undefined : ratePlan(destination.rateLimit);
      await pacing.restoreSends(destinationId, arrivedBy, bucket);
    }
    const pending = await store.pendingDestinations();
    for (const { destinationId, nextPendingAt } of pending) await schedule.wake(destinationId, nextPendingAt);
    destinations.clear();
    await redis.set(keys.epoch(), 'ready');
    // The loops that found the state not ready sleep; the ticks woken above are due now.
    await schedule.kick();
    const count = [...requeued.values()].reduce((a, b) => a + b, 0);
    if (count > 0) metrics.repairs.inc({ kind: 'requeued' }, count);
    // On a first start there is nothing to repair; after a loss of Redis there may be.
    const level = count > 0 || pending.length > 0 ? 'warn' : 'info';
    logger[level]({ requeued: count, scheduled: pending.length }, 'built the Redis state from the store');
    return true;
  }

  async sweep(): Promise<void> {
    const { store, schedule, clock, leaseMs, unstartedLeaseMs, logger, metrics } = this.deps;
    await this.recoverIfLost();
    let rewoken = 0;
    const pending = await store.pendingDestinations();
    // Asked for all of them in a few round trips (a sweep of 10,000 pending destinations one
    // at a time kept the rate limiter busy for seconds, every sweep).
    const scheduled = await schedule.scheduledAmong(pending.map((p) => p.destinationId));
    for (const listed of pending) {
      const { destinationId } = listed;
      if (scheduled.has(destinationId)) continue;
      // The list is older than the schedule's answer: since it was read, a tick may have
      // claimed the work and left the schedule (nothing pending, nothing to repair). So the
      // pending work is read again, after the schedule was seen empty; any left needs a
      // tick, and the wake is made whatever its origin (a needless one is harmless). It
      // counts as a repair only if it was pending when the list was read: work due later
      // than that is new, and whoever made it pending (an ingest, a retry) wakes it itself.
      const { nextPendingAt } = await store.destinationWork(destinationId);
      if (nextPendingAt === null) continue;
      await schedule.wake(destinationId, nextPendingAt);
      if (nextPendingAt <= listed.nextPendingAt) rewoken++;
    }
    const now = clock();
    const requeued = await this.requeueLost(now - Math.min(unstartedLeaseMs, leaseMs), now - leaseMs, now);
    for (const destinationId of requeued.keys()) await schedule.wake(destinationId, now);
    const count = [...requeued.values()].reduce((a, b) => a + b, 0);
    // An ingest that raced the delete of its destination left deliveries nothing will send.
    const orphans = await store.cancelOrphans(now);
    reportRepairs(logger, metrics, { rewoken, requeued: count, orphans });
  }
}

/**
 * Waking destinations from any process (the API after an ingest, a worker after a retry or
 * a freed concurrency slot): a sooner-only wake in the shared schedule (`wakeForWork` in
 * packages/distributed adds the destination's room). A wake that lands at the head of a
 * schedule kicks the rate limiters so none sleeps past it.
 */

import type { Schedule } from '@sluice/engine';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';
import { Scripts } from './scripts.ts';

export class ScheduleClient implements Schedule {
  readonly scripts: Scripts;
  private readonly redis: RedisClient;
  private readonly keys: Keys;

  constructor(redis: RedisClient, keys: Keys) {
    this.redis = redis;
    this.keys = keys;
    this.scripts = new Scripts(redis, keys);
  }

  /** Schedules a tick no later than `at` (sooner only). */
  async wake(destinationId: string, at: number): Promise<void> {
    if (await this.scripts.wake(destinationId, at)) {
      await this.redis.publish(this.keys.kickChannel(), destinationId);
    }
  }

  /** Tells every rate limiter to look at the schedule now (their loops may sleep up to 1 s). */
  async kick(): Promise<void> {
    await this.redis.publish(this.keys.kickChannel(), '*');
  }

  /**
   * Due in the schedule or its tick running (leased). Both read in one MULTI: a tick's claim
   * and settle move the destination between the two sets, and two separate reads could
   * straddle a settle (the schedule read while leased, the lease after) and see neither.
   */
  async isScheduled(destinationId: string): Promise<boolean> {
    return (await this.scheduledAmong([destinationId])).has(destinationId);
  }

  /**
   * Which of these destinations are scheduled or leased, as `isScheduled` answers for one: a
   * MULTI per shard and chunk with one ZMSCORE on each set, so a sweep over 10,000 pending
   * destinations is a few round trips instead of one per destination.
   */
  async scheduledAmong(destinationIds: readonly string[], chunk = 500): Promise<Set<string>> {
    const byShard = new Map<number, string[]>();
    for (const id of destinationIds) {
      const shard = this.keys.shardOf(id);
      const ids = byShard.get(shard) ?? [];
      ids.push(id);
      byShard.set(shard, ids);
    }
    const scheduled = new Set<string>();
    for (const [shard, ids] of byShard) {
      for (let i = 0; i < ids.length; i += chunk) {
        const part = ids.slice(i, i + chunk);
        const replies = await this.redis
          .multi()
          .zmscore(this.keys.schedule(shard), ...part)
          .zmscore(this.keys.leases(shard), ...part)
          .exec();
        if (replies === null) throw new Error('scheduledAmong: the transaction was aborted');
        for (const [err] of replies) if (err) throw err;
        const [due, leased] = replies.map(([, scores]) => scores as (string | null)[]);
        part.forEach((id, k) => {
          if (due?.[k] != null || leased?.[k] != null) scheduled.add(id);
        });
      }
    }
    return scheduled;
  }

  /**
   * Which of these destinations have a tick running now: a lease that has not expired (an
   * expired one is a dead replica's, waiting to be taken over). The sweeper leaves a running
   * tick's claims alone: it publishes them before it settles.
   */
  async leasedAmong(destinationIds: readonly string[], now: number): Promise<Set<string>> {
    const leased = new Set<string>();
    for (const id of destinationIds) {
      const until = await this.redis.zscore(this.keys.leases(this.keys.shardOf(id)), id);
      if (until !== null && Number(until) > now) leased.add(id);
    }
    return leased;
  }
}

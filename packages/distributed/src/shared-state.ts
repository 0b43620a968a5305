/**
 * What every process of the distributed shape opens the same way: a command connection, a
 * subscriber connection following destination changes, the destination cache, the pace
 * state and the schedule client, over one key prefix.
 */

import { DestinationCache } from '@sluice/engine';
import { type ChangeFeed, followChanges, Keys, RedisPacing, ScheduleClient } from '@sluice/redis';
import type { Store } from '@sluice/store';
import { Redis } from 'ioredis';

export interface SharedStateOptions {
  store: Store;
  redisUrl: string;
  prefix: string;
  /** `SLUICE_WINDOW_MARGIN_MS`. */
  windowMarginMs: number;
  /** `SLUICE_ARRIVAL_BOUND_MS`. */
  arrivalBoundMs: number;
  /** Most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`). */
  destinationCacheSize: number;
  /**
   * Where this process sends requests: how long one's `inflight` entry outlives the process
   * (`SLUICE_JOB_LOCK_MS`, RedisPacing `inFlightLeaseMs`); absent: its timeout.
   */
  inFlightLeaseMs?: number | undefined;
}

export interface SharedState {
  keys: Keys;
  redis: Redis;
  /** Subscribed to the change feed; others may add channels (the kick). */
  subscriber: Redis;
  destinations: DestinationCache;
  pacing: RedisPacing;
  schedule: ScheduleClient;
  close(): Promise<void>;
}

export async function openSharedState(o: SharedStateOptions): Promise<SharedState> {
  const keys = new Keys(o.prefix);
  // Commands issued in one turn of the event loop leave in one write (ioredis flushes them
  // at setImmediate): the workers' per-request pace scripts and the API's wakes are many
  // small commands, and on this kind of machine each write is a costly syscall.
  const redis = new Redis(o.redisUrl, { enableAutoPipelining: true });
  const subscriber = new Redis(o.redisUrl);
  const destinations = new DestinationCache(o.store, o.destinationCacheSize);
  const pacing = new RedisPacing({
    redis,
    keys,
    windowMarginMs: o.windowMarginMs,
    arrivalBoundMs: o.arrivalBoundMs,
    inFlightLeaseMs: o.inFlightLeaseMs,
  });
  const feed: ChangeFeed = await followChanges(subscriber, keys, destinations);
  return {
    keys,
    redis,
    subscriber,
    destinations,
    pacing,
    schedule: new ScheduleClient(redis, keys),
    async close() {
      pacing.close();
      await feed.stop();
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}

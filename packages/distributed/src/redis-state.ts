/**
 * What every process of the distributed shape opens the same way: a command connection, a
 * subscriber connection following destination changes, the destination cache, the pace
 * state and the schedule client, over one key prefix.
 */

import { DestinationCache } from '@sluice/engine';
import {
  type ChangeFeed,
  connectRedis,
  followChanges,
  Keys,
  type RedisClient,
  RedisPacing,
  type RedisTarget,
  ScheduleClient,
} from '@sluice/redis';
import type { Store } from '@sluice/store';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisStateOptions {
  store: Store;
  /** The server, or a seed node of the cluster (`SLUICE_REDIS_CLUSTER`). */
  redis: RedisTarget;
  prefix: string;
  /** `SLUICE_SCHEDULE_SHARDS`. */
  shards: number;
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
  /** Hears of a Redis connection lost and back (once each per outage). */
  logger?: Logger | undefined;
  /**
   * The API's: its command connection fails a command at once while Redis cannot answer
   * (`FAIL_FAST`), so a request that needs Redis answers 503 promptly. Absent: a command waits
   * for the reconnection (ioredis' default), as the rate limiters' and workers' loops do.
   */
  failFast?: boolean | undefined;
}

/**
 * This process's handles on what the distributed shape keeps in Redis (the schedule, the
 * pace, the change feed), and the destination cache that feed keeps fresh.
 */
export interface RedisState {
  keys: Keys;
  redis: RedisClient;
  /** Subscribed to the change feed; others may add channels (the kick). */
  subscriber: RedisClient;
  destinations: DestinationCache;
  pacing: RedisPacing;
  schedule: ScheduleClient;
  close(): Promise<void>;
}

/** Longest wait for a reply on a fail-fast connection: Redis answers in well under a millisecond. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * ioredis options for a connection that never holds a command for Redis (the BullMQ guide's
 * "failing fast when Redis is down"): no offline queue (a command while disconnected fails at
 * once), no resend of the commands in flight when the connection drops (they fail with
 * `MaxRetriesPerRequestError`), a reply timeout for a connection that is gone without a
 * reset, and reconnections at most a second apart, so the first request after Redis is back
 * finds the connection up. Every error it gives is one `isUnavailable` knows: a 503.
 */
const FAIL_FAST: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: COMMAND_TIMEOUT_MS,
  retryStrategy: (times) => Math.min(times * 100, 1_000),
};

/**
 * Logs a connection's loss once (when ioredis starts reconnecting, with the last error it
 * saw), and its return once. The error listener also keeps ioredis from printing
 * "Unhandled error event" at every reconnection attempt.
 */
function watchConnection(redis: RedisClient, name: string, logger: Logger | undefined): void {
  let lost = false;
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    lastError = err;
  });
  redis.on('reconnecting', () => {
    if (lost) return;
    lost = true;
    logger?.warn({ err: lastError, connection: name }, 'redis connection lost; reconnecting');
  });
  redis.on('ready', () => {
    if (!lost) return;
    lost = false;
    lastError = undefined;
    logger?.info({ connection: name }, 'redis connection back');
  });
}

/**
 * The shard count is part of every key's name: two processes that disagree on it would run
 * one destination's ticks in two shards (two schedules, two windows). The first process
 * records it; a process with another count refuses to start (docs/scaling.md says how to
 * change it: drain, delete, restart).
 */
class LayoutMismatchError extends Error {}

async function checkLayout(redis: RedisClient, keys: Keys): Promise<void> {
  const shards = String(keys.shards);
  await redis.set(keys.layout(), shards, 'NX');
  const recorded = await redis.get(keys.layout());
  if (recorded !== null && recorded !== shards)
    throw new LayoutMismatchError(
      `SLUICE_SCHEDULE_SHARDS is ${shards} but Redis holds the state of ${recorded} shards under the prefix ${keys.prefix}: ` +
        'every process must have the same count; to change it, see docs/scaling.md "Changing the shard count"',
    );
}

/** Resolves once `redis` is connected; it retries by itself until then. */
const connected = (redis: RedisClient): Promise<void> =>
  redis.status === 'ready'
    ? Promise.resolve()
    : new Promise((resolve) => redis.once('ready', () => resolve()));

export async function openRedisState(options: RedisStateOptions): Promise<RedisState> {
  const keys = new Keys(options.prefix, options.shards, { cluster: options.redis.cluster });
  // Commands issued in one turn of the event loop leave in one write (ioredis flushes them
  // at setImmediate): the workers' per-request pace scripts and the API's wakes are many
  // small commands, and each write is a syscall.
  const redis = connectRedis(options.redis, {
    enableAutoPipelining: true,
    ...(options.failFast ? FAIL_FAST : {}),
  });
  const subscriber = connectRedis(options.redis);
  watchConnection(redis, 'commands', options.logger);
  watchConnection(subscriber, 'subscriber', options.logger);
  // Without an offline queue, a command before the first connection would fail.
  if (options.failFast) await connected(redis);
  try {
    await checkLayout(redis, keys);
  } catch (err) {
    redis.disconnect();
    subscriber.disconnect();
    throw err;
  }
  const destinations = new DestinationCache(options.store, options.destinationCacheSize);
  const pacing = new RedisPacing({
    redis,
    keys,
    windowMarginMs: options.windowMarginMs,
    arrivalBoundMs: options.arrivalBoundMs,
    inFlightLeaseMs: options.inFlightLeaseMs,
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

/**
 * The rate limiter service (DESIGN flow 2), any number of replicas: claims due ticks from
 * the Redis schedule, runs them against the live destination (a cache kept fresh by the
 * change feed), publishes what the tick allows to the BullMQ delivery queue, and sweeps.
 * `main.ts` starts it from the environment; tests start it here, in process.
 */

import {
  createTick,
  DestinationCache,
  EngineMetrics,
  type OpsServer,
  type Store,
  startOpsServer,
} from '@sluice/engine';
import {
  BullPublisher,
  type ChangeFeed,
  followChanges,
  Keys,
  RedisPacing,
  RedisSchedule,
  ScheduleClient,
} from '@sluice/redis';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DistributedSweeper } from './sweeper.ts';

export interface RateLimiterOptions {
  store: Store;
  redisUrl: string;
  prefix: string;
  logger: Logger;
  host?: string;
  port?: number;
  windowMarginMs?: number;
  arrivalBoundMs?: number;
  /** A published delivery whose request has not started after this no longer counts. */
  claimLeaseMs?: number;
  /** A claimed delivery with no job left returns to pending after this. */
  leaseMs?: number;
  sweepIntervalMs?: number;
  clock?: () => number;
}

export interface RateLimiter {
  url: string;
  schedule: RedisSchedule;
  sweeper: DistributedSweeper;
  close(): Promise<void>;
}

export function bullConnection(redisUrl: string) {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
  };
}

export async function startRateLimiter(o: RateLimiterOptions): Promise<RateLimiter> {
  const clock = o.clock ?? Date.now;
  const keys = new Keys(o.prefix);
  const redis = new Redis(o.redisUrl);
  const subscriber = new Redis(o.redisUrl);
  const destinations = new DestinationCache(o.store);
  const pacing = new RedisPacing({
    redis,
    keys,
    windowMarginMs: o.windowMarginMs ?? 5,
    arrivalBoundMs: o.arrivalBoundMs ?? 250,
    claimLeaseMs: o.claimLeaseMs ?? 3_600_000,
  });
  const publisher = new BullPublisher({ connection: bullConnection(o.redisUrl), prefix: `${o.prefix}-bull` });
  const registry = new Registry();
  const metrics = new EngineMetrics(registry, async () => ({
    queued: await publisher.depth(),
    inFlight: 0,
    scheduled: await redis.zcard(keys.schedule(0)),
  }));
  const scheduleClient = new ScheduleClient(redis, keys);
  const schedule = new RedisSchedule({
    redis,
    subscriber,
    keys,
    clock,
    tick: createTick({ store: o.store, destinations, pacing, publisher, metrics, clock }),
    onTickError: (destinationId, err) => o.logger.error({ err, destinationId }, 'tick failed'),
  });
  const sweeper = new DistributedSweeper({
    store: o.store,
    redis,
    keys,
    schedule: scheduleClient,
    pacing,
    publisher,
    destinations,
    logger: o.logger,
    clock,
    leaseMs: o.leaseMs ?? 300_000,
  });
  const feed: ChangeFeed = await followChanges(subscriber, keys, destinations);
  await sweeper.recoverIfLost();
  await schedule.start();
  sweeper.start(o.sweepIntervalMs ?? 5_000);
  const ops: OpsServer = await startOpsServer({
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    registry,
    ready: async () => {
      await o.store.ping();
      await redis.ping();
    },
  });
  o.logger.info({ url: ops.url }, 'rate limiter ready');
  return {
    url: ops.url,
    schedule,
    sweeper,
    async close() {
      await sweeper.stop();
      await schedule.stop(); // running ticks settle: no lease is left behind
      await feed.stop();
      await publisher.close();
      await ops.close();
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}

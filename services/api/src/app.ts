/**
 * The API service of the distributed shape: the same HTTP API as the single box, on the
 * shared store; after each commit it wakes the destination in the Redis schedule or
 * announces the change to every process. `main.ts` starts it from the environment; tests
 * start it here, in process.
 */

import { buildApi } from '@sluice/api';
import { apiConfig } from '@sluice/config';
import { EngineMetrics, registerAlertGauge, registerHealthGauge, type Store } from '@sluice/engine';
import {
  BullPublisher,
  bullConnection,
  openSharedState,
  RedisDispatcher,
  type ScheduleClient,
  tickingSchedule,
} from '@sluice/redis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { ApiServiceConfig } from './config.ts';

/** What the API service runs on besides its settings. */
export interface ApiServiceDeps {
  store: Store;
  logger: Logger;
  clock?: () => number;
}

export interface ApiService {
  url: string;
  schedule: ScheduleClient;
  close(): Promise<void>;
}

export async function startApiService(config: ApiServiceConfig, o: ApiServiceDeps): Promise<ApiService> {
  const clock = o.clock ?? Date.now;
  const shared = await openSharedState({
    store: o.store,
    redisUrl: config.REDIS_URL,
    prefix: config.SLUICE_REDIS_PREFIX,
    windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
    arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
    destinationCacheSize: config.SLUICE_DESTINATION_CACHE_SIZE,
  });
  const { keys, redis, destinations, pacing, schedule } = shared;
  const registry = new Registry();
  // Its gauges read the shared state (every service shows the same); it publishes what the
  // ticks it runs allow.
  const queue = new BullPublisher({
    connection: bullConnection(config.REDIS_URL),
    prefix: `${config.SLUICE_REDIS_PREFIX}-bull`,
    jobDeliveries: config.SLUICE_JOB_DELIVERIES,
  });
  const metrics = new EngineMetrics(
    registry,
    async () => ({
      queued: await queue.depth(),
      inFlight: 0,
      scheduled: await redis.zcard(keys.schedule(0)),
    }),
    (now) => o.store.oldestDueAt(now),
    clock,
  );
  registerAlertGauge(registry, o.store);
  registerHealthGauge(registry, o.store);
  // The ticks this process runs: those its wakes claim, never a loop over the schedule
  // (SLUICE_API_TICKS; docs/adr/0013). Off: a wake kicks a rate limiter to run it.
  const ticks = !config.SLUICE_API_TICKS
    ? undefined
    : tickingSchedule({
        shared,
        store: o.store,
        publisher: queue,
        metrics,
        logger: o.logger,
        clock,
        leadMs: config.SLUICE_TICK_LEAD_MS,
      });
  const dispatcher = new RedisDispatcher({
    redis,
    keys,
    schedule,
    pacing,
    destinations,
    logger: o.logger,
    clock,
    ticks,
  });
  const app = await buildApi({
    store: o.store,
    dispatcher,
    adminToken: config.SLUICE_ADMIN_TOKEN,
    config: apiConfig(config),
    logger: o.logger,
    registry,
    clock,
    ready: async () => {
      await o.store.ping();
      await redis.ping();
    },
  });
  const url = await app.listen({ port: config.PORT, host: config.HOST });
  o.logger.info({ url }, 'listening');
  return {
    url,
    schedule,
    async close() {
      await app.close(); // stops accepting, finishes the requests in flight
      await dispatcher.settled();
      await ticks?.stop(); // the ticks it runs settle: no lease is left behind
      await queue.close();
      await shared.close();
    },
  };
}

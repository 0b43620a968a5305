/**
 * The API service of the distributed shape: the same HTTP API as the single box, on the
 * shared store; after each commit it wakes the destination in the Redis schedule or
 * announces the change to every process. `main.ts` starts it from the environment; tests
 * start it here, in process.
 */

import { type ApiConfig, buildApi } from '@sluice/api';
import { createTickLoop, openSharedState, RedisDispatcher } from '@sluice/distributed';
import { EngineMetrics, registerAlertGauge, registerHealthGauge, type Store } from '@sluice/engine';
import { BullPublisher, bullConnection, type ScheduleClient } from '@sluice/redis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';

export interface ApiServiceOptions {
  store: Store;
  redisUrl: string;
  prefix: string;
  adminToken: string;
  config: ApiConfig;
  logger: Logger;
  host?: string;
  port?: number;
  windowMarginMs?: number;
  arrivalBoundMs?: number;
  claimLeaseMs?: number;
  /**
   * Run the tick an accepted event wakes when it is due now and none is running, instead of
   * kicking a rate limiter to run it (`SLUICE_API_TICKS`, default true; docs/adr/0013).
   */
  runTicks?: boolean | undefined;
  /** As the rate limiter's (`SLUICE_TICK_LEAD_MS`), for the ticks this process runs. */
  tickLeadMs?: number | undefined;
  /** As the rate limiter's (`SLUICE_JOB_DELIVERIES`), for the ticks this process runs. */
  jobDeliveries?: number | undefined;
  /** Most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`; default 100,000). */
  destinationCacheSize?: number | undefined;
  clock?: () => number;
}

export interface ApiService {
  url: string;
  schedule: ScheduleClient;
  close(): Promise<void>;
}

export async function startApiService(o: ApiServiceOptions): Promise<ApiService> {
  const clock = o.clock ?? Date.now;
  const shared = await openSharedState(o);
  const { keys, redis, destinations, pacing, schedule } = shared;
  const registry = new Registry();
  // Its gauges read the shared state (every service shows the same); it publishes what the
  // ticks it runs allow.
  const queue = new BullPublisher({
    connection: bullConnection(o.redisUrl),
    prefix: `${o.prefix}-bull`,
    jobDeliveries: o.jobDeliveries,
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
  // The ticks this process runs: those its wakes claim, never a loop over the schedule.
  const ticks =
    o.runTicks === false
      ? undefined
      : createTickLoop({
          shared,
          store: o.store,
          publisher: queue,
          metrics,
          logger: o.logger,
          clock,
          leadMs: o.tickLeadMs,
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
    adminToken: o.adminToken,
    config: o.config,
    logger: o.logger,
    registry,
    clock,
    ready: async () => {
      await o.store.ping();
      await redis.ping();
    },
  });
  const url = await app.listen({ port: o.port ?? 0, host: o.host ?? '127.0.0.1' });
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

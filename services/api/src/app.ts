/**
 * The API service of the distributed shape: the same HTTP API as the single box, on the
 * shared store; after each commit it wakes the destination in the Redis schedule or
 * announces the change to every process. `main.ts` starts it from the environment; tests
 * start it here, in process.
 */

import { buildApi } from '@sluice/api';
import { apiConfig, quotaDefaults, transformOptions } from '@sluice/config';
import { createTickLoop, RedisDispatcher } from '@sluice/distributed';
import { registerAlertGauge, Transforms } from '@sluice/engine';
import { RedisRateCounter, type ScheduleClient } from '@sluice/redis';
import { openDistributedProcess } from '@sluice/service';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';
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

export async function startApiService(config: ApiServiceConfig, deps: ApiServiceDeps): Promise<ApiService> {
  const clock = deps.clock ?? Date.now;
  // It publishes what the ticks it runs allow. A request that needs Redis while Redis cannot
  // answer fails at once (503), rather than waiting for a reconnection.
  const distributed = await openDistributedProcess(config, {
    store: deps.store,
    clock,
    jobDeliveries: config.SLUICE_JOB_DELIVERIES,
    failFast: true,
    logger: deps.logger,
  });
  const { redisState, queue, registry, metrics, ready } = distributed;
  const { keys, redis, destinations, pacing, schedule } = redisState;
  registerAlertGauge(registry, deps.store);
  // The ticks this process runs: those its wakes claim, never a loop over the schedule
  // (SLUICE_API_TICKS; docs/adr/0013). Off: a wake kicks a rate limiter to run it.
  const ticks = config.SLUICE_API_TICKS
    ? createTickLoop({
        redisState,
        store: deps.store,
        publisher: queue,
        metrics,
        logger: deps.logger,
        clock,
        leadMs: config.SLUICE_TICK_LEAD_MS,
        leaseMs: config.SLUICE_TICK_LEASE_MS,
        maxInFlight: config.SLUICE_DESTINATION_MAX_IN_FLIGHT,
      })
    : undefined;
  const dispatcher = new RedisDispatcher({
    redis,
    keys,
    schedule,
    pacing,
    destinations,
    logger: deps.logger,
    clock,
    ticks,
  });
  const transforms = new Transforms(transformOptions(config));
  const app = await buildApi({
    store: deps.store,
    dispatcher,
    adminToken: config.SLUICE_ADMIN_TOKEN,
    config: apiConfig(config),
    logger: deps.logger,
    registry,
    clock,
    ready,
    // Every replica takes from one bucket per tenant (docs/operations.md "Tenant quotas").
    quotas: {
      defaults: quotaDefaults(config),
      rate: new RedisRateCounter(redis, keys),
      previewsPerSecond: config.SLUICE_TENANT_PREVIEWS_PER_SECOND,
    },
    transforms,
  });
  const url = await app.listen({ port: config.PORT, host: config.HOST });
  deps.logger.info({ url }, 'api ready');
  return {
    url,
    schedule,
    async close() {
      await app.close(); // stops accepting, finishes the requests in flight
      await dispatcher.settled();
      await transforms.close();
      await ticks?.stop(); // the ticks it runs settle: no lease is left behind
      await distributed.close();
    },
  };
}

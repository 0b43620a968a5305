/**
 * The rate limiter service (DESIGN flow 2), any number of replicas: claims due ticks from
 * the Redis schedule, runs them against the live destination (a cache kept fresh by the
 * change feed), publishes what the tick allows to the BullMQ delivery queue, and sweeps.
 * `main.ts` starts it from the environment; tests start it here, in process.
 */

import { alertSettings } from '@sluice/config';
import {
  ALERTS_DESTINATION_ID,
  Alerter,
  EngineMetrics,
  ensureAlertsDestination,
  type OpsServer,
  Retention,
  registerHealthGauge,
  type Store,
  startOpsServer,
} from '@sluice/engine';
import {
  BullPublisher,
  bullConnection,
  openSharedState,
  RedisDispatcher,
  type RedisSchedule,
  tickingSchedule,
} from '@sluice/redis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { RateLimiterConfig } from './config.ts';
import { DistributedSweeper } from './sweeper.ts';

/** What the rate limiter runs on besides its settings. */
export interface RateLimiterDeps {
  store: Store;
  logger: Logger;
  clock?: () => number;
}

export interface RateLimiter {
  url: string;
  schedule: RedisSchedule;
  sweeper: DistributedSweeper;
  close(): Promise<void>;
}

export async function startRateLimiter(config: RateLimiterConfig, o: RateLimiterDeps): Promise<RateLimiter> {
  const clock = o.clock ?? Date.now;
  const shared = await openSharedState({
    store: o.store,
    redisUrl: config.REDIS_URL,
    prefix: config.SLUICE_REDIS_PREFIX,
    windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
    arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
    destinationCacheSize: config.SLUICE_DESTINATION_CACHE_SIZE,
  });
  const { keys, redis, subscriber, destinations, pacing } = shared;
  const publisher = new BullPublisher({
    connection: bullConnection(config.REDIS_URL),
    prefix: `${config.SLUICE_REDIS_PREFIX}-bull`,
    jobDeliveries: config.SLUICE_JOB_DELIVERIES,
  });
  const registry = new Registry();
  const metrics = new EngineMetrics(
    registry,
    async () => ({
      queued: await publisher.depth(),
      inFlight: 0,
      scheduled: await redis.zcard(keys.schedule(0)),
    }),
    (now) => o.store.oldestDueAt(now),
    clock,
  );
  registerHealthGauge(registry, o.store);
  const schedule = tickingSchedule({
    shared,
    subscriber,
    store: o.store,
    publisher,
    metrics,
    logger: o.logger,
    clock,
    leadMs: config.SLUICE_TICK_LEAD_MS,
    onTakeover: (destinationIds) => {
      metrics.tickTakeovers.inc(destinationIds.length);
      o.logger.warn(
        { count: destinationIds.length, destinationIds: destinationIds.slice(0, 10) },
        'took over ticks whose lease expired: the rate limiter running them died or froze mid-tick',
      );
    },
  });
  const sweeper = new DistributedSweeper({
    store: o.store,
    redis,
    keys,
    schedule: shared.schedule,
    pacing,
    publisher,
    destinations,
    logger: o.logger,
    metrics,
    clock,
    leaseMs: config.SLUICE_LEASE_MS,
  });
  // Every replica runs retention: it deletes in small batches, so replicas only share work.
  const retention = new Retention({
    store: o.store,
    logger: o.logger,
    clock,
    retentionMs: config.SLUICE_RETENTION_DAYS * 86_400_000,
    intervalMs: 60_000,
    batch: 500,
  });
  // Backlog alerts: every replica evaluates; the store lets exactly one raise each alert.
  const alerts = alertSettings(config);
  const dispatcher = new RedisDispatcher({
    redis,
    keys,
    schedule: shared.schedule,
    pacing,
    destinations,
    logger: o.logger,
    clock,
  });
  if (alerts.sink !== null) {
    await ensureAlertsDestination(o.store, alerts.sink, clock());
    await dispatcher.destinationChanged(ALERTS_DESTINATION_ID);
  }
  const alerter = new Alerter({
    store: o.store,
    logger: o.logger,
    registry,
    clock,
    thresholds: alerts.thresholds,
    intervalMs: alerts.intervalMs,
    notify: alerts.sink !== null,
    wake: (id) => dispatcher.wake(id),
  });
  await sweeper.recoverIfLost();
  await schedule.start();
  sweeper.start(config.SLUICE_SWEEP_INTERVAL_MS);
  retention.start();
  alerter.start();
  const ops: OpsServer = await startOpsServer({
    host: config.HOST,
    port: config.PORT,
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
      ops.draining();
      await alerter.stop();
      await retention.stop();
      await sweeper.stop();
      await schedule.stop(); // running ticks settle: no lease is left behind
      await publisher.close();
      await ops.close();
      await shared.close();
    },
  };
}

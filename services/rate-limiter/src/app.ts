/**
 * The rate limiter service (DESIGN flow 2), any number of replicas: claims due ticks from
 * the Redis schedule, runs them against the live destination (a cache kept fresh by the
 * change feed), publishes what the tick allows to the BullMQ delivery queue, and sweeps.
 * `main.ts` starts it from the environment; tests start it here, in process.
 */

import { type AlertSettings, defaultAlertSettings } from '@sluice/config';
import { createTickLoop, DistributedSweeper, openSharedState, RedisDispatcher } from '@sluice/distributed';
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
import { BullPublisher, bullConnection, type RedisTickLoop } from '@sluice/redis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';

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
  /** How long before its window has room a held-back tick runs (default TICK_LEAD_MS; docs/adr/0012). */
  tickLeadMs?: number | undefined;
  /** Most deliveries in one delivery-queue job. */
  jobDeliveries?: number | undefined;
  sweepIntervalMs?: number;
  /** Delivered and cancelled deliveries older than this are deleted (default 14 days). */
  retentionMs?: number;
  /** Backlog alerts (ADR 0009); default: the defaults of `SLUICE_ALERT_*`, no webhook. */
  alerts?: AlertSettings;
  /** Most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`; default 100,000). */
  destinationCacheSize?: number | undefined;
  clock?: () => number;
}

export interface RateLimiter {
  url: string;
  schedule: RedisTickLoop;
  sweeper: DistributedSweeper;
  close(): Promise<void>;
}

export async function startRateLimiter(o: RateLimiterOptions): Promise<RateLimiter> {
  const clock = o.clock ?? Date.now;
  const shared = await openSharedState(o);
  const { keys, redis, subscriber, destinations, pacing } = shared;
  const publisher = new BullPublisher({
    connection: bullConnection(o.redisUrl),
    prefix: `${o.prefix}-bull`,
    jobDeliveries: o.jobDeliveries,
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
  const schedule = createTickLoop({
    shared,
    subscriber,
    store: o.store,
    publisher,
    metrics,
    logger: o.logger,
    clock,
    leadMs: o.tickLeadMs,
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
    leaseMs: o.leaseMs ?? 300_000,
  });
  // Every replica runs retention: it deletes in small batches, so replicas only share work.
  const retention = new Retention({
    store: o.store,
    logger: o.logger,
    clock,
    retentionMs: o.retentionMs ?? 14 * 86_400_000,
    intervalMs: 60_000,
    batch: 500,
  });
  // Backlog alerts: every replica evaluates; the store lets exactly one raise each alert.
  const alerts = o.alerts ?? defaultAlertSettings();
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
  sweeper.start(o.sweepIntervalMs ?? 5_000);
  retention.start();
  alerter.start();
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

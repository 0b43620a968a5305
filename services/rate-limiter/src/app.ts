/**
 * The rate limiter service (docs/design.md, flow 2), any number of replicas: claims due ticks from
 * the Redis schedule, runs them against the live destination (a cache kept fresh by the
 * change feed), publishes what the tick allows to the BullMQ delivery queue, and sweeps.
 * `main.ts` starts it from the environment; tests start it here, in process.
 */

import { alertSettings } from '@sluice/config';
import { createTickLoop, DistributedSweeper, RedisDispatcher } from '@sluice/distributed';
import { ALERTS_DESTINATION_ID, Alerter, ensureAlertsDestination, Retention } from '@sluice/engine';
import type { RedisTickLoop } from '@sluice/redis';
import { openDistributedProcess } from '@sluice/service';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { RateLimiterConfig } from './config.ts';

/** What the rate limiter runs on besides its settings. */
export interface RateLimiterDeps {
  store: Store;
  logger: Logger;
  clock?: () => number;
}

export interface RateLimiter {
  url: string;
  schedule: RedisTickLoop;
  sweeper: DistributedSweeper;
  close(): Promise<void>;
}

export async function startRateLimiter(
  config: RateLimiterConfig,
  deps: RateLimiterDeps,
): Promise<RateLimiter> {
  const clock = deps.clock ?? Date.now;
  const distributed = await openDistributedProcess(config, {
    store: deps.store,
    logger: deps.logger,
    clock,
    jobDeliveries: config.SLUICE_JOB_DELIVERIES,
  });
  const { redisState, queue: publisher, registry, metrics } = distributed;
  const { keys, redis, subscriber, destinations, pacing } = redisState;
  const schedule = createTickLoop({
    redisState,
    subscriber,
    store: deps.store,
    publisher,
    metrics,
    logger: deps.logger,
    clock,
    leadMs: config.SLUICE_TICK_LEAD_MS,
    leaseMs: config.SLUICE_TICK_LEASE_MS,
    maxInFlight: config.SLUICE_DESTINATION_MAX_IN_FLIGHT,
    onTakeover: (destinationIds) => {
      metrics.tickTakeovers.inc(destinationIds.length);
      deps.logger.warn(
        { count: destinationIds.length, destinationIds: destinationIds.slice(0, 10) },
        'took over ticks whose lease expired: the rate limiter running them died or froze mid-tick',
      );
    },
  });
  const sweeper = new DistributedSweeper({
    store: deps.store,
    redis,
    keys,
    schedule: redisState.schedule,
    pacing,
    publisher,
    destinations,
    logger: deps.logger,
    metrics,
    clock,
    leaseMs: config.SLUICE_LEASE_MS,
    unstartedLeaseMs: config.SLUICE_UNSTARTED_LEASE_MS,
  });
  // Every replica runs retention: it deletes in small batches, so replicas only share work.
  const retention = new Retention({
    store: deps.store,
    logger: deps.logger,
    clock,
    retentionMs: config.SLUICE_RETENTION_DAYS * 86_400_000,
  });
  // Backlog alerts: every replica evaluates; the store lets exactly one raise each alert.
  const alerts = alertSettings(config);
  const dispatcher = new RedisDispatcher({
    redis,
    keys,
    schedule: redisState.schedule,
    pacing,
    destinations,
    logger: deps.logger,
    clock,
  });
  if (alerts.sink !== null) {
    await ensureAlertsDestination(deps.store, alerts.sink, clock());
    await dispatcher.destinationChanged(ALERTS_DESTINATION_ID);
  }
  const alerter = new Alerter({
    store: deps.store,
    logger: deps.logger,
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
  const ops = await distributed.serveOps();
  deps.logger.info({ url: ops.url }, 'rate limiter ready');
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
      await ops.close();
      await distributed.close();
    },
  };
}

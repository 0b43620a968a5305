/**
 * The distributed shape in one process: the API, a rate limiter and a delivery worker over
 * one Postgres store and one Redis, exactly as the three services run them (the same start
 * functions), only sharing a process. `npm start` runs this when both `DATABASE_URL` and
 * `REDIS_URL` are set; the behavioural tests run their suite against it (docs/design.md I7).
 */

import type { ApiConfig } from '@sluice/api';
import { startApiService } from '@sluice/api-service';
import type { AlertSettings } from '@sluice/config';
import { startDeliveryWorkerService } from '@sluice/delivery-worker';
import type { EngineOptions, LookupFunction } from '@sluice/engine';
import { startRateLimiter } from '@sluice/rate-limiter';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';

export interface DistributedBoxOptions {
  store: Store;
  redisUrl: string;
  /** The Redis key prefix of this installation (tests give each its own). */
  prefix: string;
  adminToken: string;
  logger: Logger;
  config: ApiConfig;
  host?: string;
  port?: number;
  lookup?: LookupFunction | undefined;
  deliveryConcurrency?: number;
  windowMarginMs?: number;
  arrivalBoundMs?: number;
  sweepIntervalMs?: number;
  leaseMs?: number;
  tickLeadMs?: number | undefined;
  jobDeliveries?: number | undefined;
  /** The API runs the ticks it wakes when due now (`SLUICE_API_TICKS`; docs/adr/0013). */
  apiTicks?: boolean | undefined;
  retentionMs?: number;
  alerts?: AlertSettings | undefined;
  /** The circuit breaker's settings (docs/adr/0007), for the delivery worker. */
  health?: EngineOptions['health'];
  /** Most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`; default 100,000). */
  destinationCacheSize?: number | undefined;
}

export interface DistributedBox {
  url: string;
  isScheduled(destinationId: string): Promise<boolean>;
  close(): Promise<void>;
}

export async function startDistributedBox(o: DistributedBoxOptions): Promise<DistributedBox> {
  const common = {
    store: o.store,
    redisUrl: o.redisUrl,
    prefix: o.prefix,
    logger: o.logger,
    host: o.host ?? '127.0.0.1',
    windowMarginMs: o.windowMarginMs ?? 5,
    arrivalBoundMs: o.arrivalBoundMs ?? 250,
    destinationCacheSize: o.destinationCacheSize,
  };
  const limiter = await startRateLimiter({
    ...common,
    port: 0,
    sweepIntervalMs: o.sweepIntervalMs ?? 5_000,
    leaseMs: o.leaseMs ?? 120_000,
    tickLeadMs: o.tickLeadMs,
    jobDeliveries: o.jobDeliveries,
    ...(o.retentionMs === undefined ? {} : { retentionMs: o.retentionMs }),
    ...(o.alerts === undefined ? {} : { alerts: o.alerts }),
  });
  const worker = await startDeliveryWorkerService({
    ...common,
    port: 0,
    concurrency: o.deliveryConcurrency ?? 256,
    allowPrivateNetworks: o.config.allowPrivateNetworks,
    lookup: o.lookup,
    health: o.health,
  }).catch(async (err: unknown) => {
    await limiter.close();
    throw err;
  });
  const api = await startApiService({
    ...common,
    port: o.port ?? 0,
    adminToken: o.adminToken,
    config: o.config,
    runTicks: o.apiTicks,
    tickLeadMs: o.tickLeadMs,
    jobDeliveries: o.jobDeliveries,
  }).catch(async (err: unknown) => {
    await worker.close();
    await limiter.close();
    throw err;
  });
  let closing: Promise<void> | undefined;
  return {
    url: api.url,
    isScheduled: (id) => api.schedule.isScheduled(id),
    close() {
      // The API first (nothing new comes in), then the limiter (no new ticks), then the
      // worker finishes what is in flight.
      closing ??= (async () => {
        await api.close();
        await limiter.close();
        await worker.close();
      })();
      return closing;
    },
  };
}

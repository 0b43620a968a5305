/**
 * What every process of the distributed shape opens the same way around the shared Redis
 * state: the state itself on the settings' URL, prefix and pace margins; a view of the
 * delivery queue (it publishes the ticks this process runs, and its depth is a gauge); the
 * engine's metrics over both; and the readiness check (the store and Redis answer).
 */

import { openRedisState, type RedisState } from '@sluice/distributed';
import { EngineMetrics, type OpsServer, registerHealthGauge, startOpsServer } from '@sluice/engine';
import {
  type BullConnection,
  BullPublisher,
  bullConnection,
  closeBullConnection,
  type RedisTarget,
} from '@sluice/redis';
import { type Store, StoreUnavailableError } from '@sluice/store';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';

/** The settings read here (every distributed service's schema has them). */
interface ProcessSettings {
  HOST: string;
  PORT: number;
  REDIS_URL: string;
  SLUICE_REDIS_CLUSTER: boolean;
  SLUICE_REDIS_PREFIX: string;
  SLUICE_SCHEDULE_SHARDS: number;
  SLUICE_WINDOW_MARGIN_MS: number;
  SLUICE_ARRIVAL_BOUND_MS: number;
  SLUICE_DESTINATION_CACHE_SIZE: number;
  SLUICE_METRICS_TOKEN?: string | undefined;
  /** Where the process runs delivery jobs (the worker, the single box): their lock. */
  SLUICE_JOB_LOCK_MS?: number | undefined;
}

export interface DistributedProcess {
  redisState: RedisState;
  /** The delivery queue: what this process publishes, and its depth for the gauges. */
  queue: BullPublisher;
  /** BullMQ's connection (its workers take it too); closed by `close`. */
  bull: BullConnection;
  registry: Registry;
  metrics: EngineMetrics;
  /** The store and Redis answer (for `/readyz`). */
  ready(): Promise<void>;
  /** `/healthz`, `/readyz` and `/metrics` on `HOST`:`PORT` (the services without the API). */
  serveOps(): Promise<OpsServer>;
  /** Closes the queue, then the shared state. */
  close(): Promise<void>;
}

/** Where the settings say Redis is: one server, or a seed node of a cluster. */
function redisTarget(config: Pick<ProcessSettings, 'REDIS_URL' | 'SLUICE_REDIS_CLUSTER'>): RedisTarget {
  return { url: config.REDIS_URL, cluster: config.SLUICE_REDIS_CLUSTER };
}

export async function openDistributedProcess(
  config: ProcessSettings,
  deps: {
    store: Store;
    clock: () => number;
    /** Requests this process has in flight (the delivery worker's); default 0. */
    inFlight?: () => number;
    /** Most deliveries in one job this process publishes (`SLUICE_JOB_DELIVERIES`). */
    jobDeliveries?: number | undefined;
    /** Hears of a metric left out of a scrape of `serveOps`, and of Redis lost and back. */
    logger?: Logger | undefined;
    /** Redis commands fail at once while it cannot answer (the API's; `RedisStateOptions.failFast`). */
    failFast?: boolean | undefined;
  },
): Promise<DistributedProcess> {
  const target = redisTarget(config);
  const redisState = await openRedisState({
    store: deps.store,
    redis: target,
    prefix: config.SLUICE_REDIS_PREFIX,
    shards: config.SLUICE_SCHEDULE_SHARDS,
    windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
    arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
    destinationCacheSize: config.SLUICE_DESTINATION_CACHE_SIZE,
    // A dead process's requests stop counting as in flight when its jobs come back.
    inFlightLeaseMs: config.SLUICE_JOB_LOCK_MS,
    failFast: deps.failFast,
    logger: deps.logger,
  });
  const { keys, redis } = redisState;
  const bull = bullConnection(target);
  const queue = new BullPublisher({ connection: bull, keys, jobDeliveries: deps.jobDeliveries });
  const registry = new Registry();
  const inFlight = deps.inFlight ?? (() => 0);
  // Every service shows the same gauges of the shared state.
  const metrics = new EngineMetrics(
    registry,
    async () => ({
      queued: await queue.depth(),
      inFlight: inFlight(),
      scheduled: (await Promise.all(keys.allShards().map((n) => redis.zcard(keys.schedule(n))))).reduce(
        (a, b) => a + b,
        0,
      ),
    }),
    (now) => deps.store.oldestDueAt(now),
    deps.clock,
  );
  registerHealthGauge(registry, deps.store);
  const ready = async (): Promise<void> => {
    await deps.store.ping();
    // Not connected: say so now, rather than wait for a reconnection to answer the PING.
    if (redis.status !== 'ready') throw new StoreUnavailableError(`Redis is ${redis.status}`);
    await redis.ping();
  };
  return {
    redisState,
    queue,
    bull,
    registry,
    metrics,
    ready,
    serveOps: () =>
      startOpsServer({
        host: config.HOST,
        port: config.PORT,
        registry,
        ready,
        logger: deps.logger,
        metricsToken: config.SLUICE_METRICS_TOKEN,
      }),
    async close() {
      await queue.close();
      closeBullConnection(bull);
      await redisState.close();
    },
  };
}

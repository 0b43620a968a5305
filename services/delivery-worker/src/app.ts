/**
 * The delivery worker service (DESIGN flow 3), stateless, any number: BullMQ Workers with
 * concurrency run the same DeliveryRunner as the single box; outcomes are written to the
 * store in batches; then a retry's destination is woken for its next attempt (back through
 * the rate limiter), a 410 is announced to every process, and a freed concurrency slot
 * wakes its destination. `main.ts` starts it from the environment; tests start it here.
 */

import { openSharedState, sharedFollowUps, wakeForWork } from '@sluice/distributed';
import {
  CompletionWriter,
  Deliverer,
  DeliveryRunner,
  EngineMetrics,
  type EngineOptions,
  type LookupFunction,
  type OpsServer,
  registerHealthGauge,
  type Store,
  startOpsServer,
} from '@sluice/engine';
import { BullPublisher, bullConnection, startDeliveryWorker } from '@sluice/redis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';

export interface DeliveryWorkerServiceOptions {
  store: Store;
  redisUrl: string;
  prefix: string;
  logger: Logger;
  host?: string;
  port?: number;
  concurrency?: number;
  allowPrivateNetworks?: boolean;
  lookup?: LookupFunction | undefined;
  windowMarginMs?: number;
  arrivalBoundMs?: number;
  claimLeaseMs?: number;
  /** The circuit breaker's settings (docs/adr/0007). */
  health?: EngineOptions['health'];
  /** Most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`; default 100,000). */
  destinationCacheSize?: number | undefined;
  clock?: () => number;
  random?: () => number;
}

export interface DeliveryWorkerService {
  url: string;
  close(): Promise<void>;
}

export async function startDeliveryWorkerService(
  o: DeliveryWorkerServiceOptions,
): Promise<DeliveryWorkerService> {
  const clock = o.clock ?? Date.now;
  const shared = await openSharedState(o);
  const { keys, redis, destinations, pacing } = shared;
  const registry = new Registry();
  let active = 0;
  // A view of the delivery queue that publishes nothing: it reads the depth for /metrics, so
  // the workers' own scrape target carries the signal they are scaled by.
  const queue = new BullPublisher({ connection: bullConnection(o.redisUrl), prefix: `${o.prefix}-bull` });
  const metrics = new EngineMetrics(
    registry,
    async () => ({
      queued: await queue.depth(),
      inFlight: active,
      scheduled: await redis.zcard(keys.schedule(0)),
    }),
    (now) => o.store.oldestDueAt(now),
    clock,
  );
  registerHealthGauge(registry, o.store);
  const concurrency = o.concurrency ?? 100;
  const deliverer = new Deliverer({
    allowPrivateNetworks: o.allowPrivateNetworks ?? false,
    lookup: o.lookup,
    connections: concurrency,
  });
  const completions = new CompletionWriter({
    store: o.store,
    metrics,
    logger: o.logger,
    clock,
    flushMs: 5,
    health: o.health,
    ...sharedFollowUps(shared, o.logger, clock),
  });
  const runner = new DeliveryRunner({
    destinations,
    pacing,
    deliverer,
    completions,
    metrics,
    clock,
    random: o.random ?? Math.random,
    store: o.store,
    // At the window's room, not now: the window was full when it was released.
    wake: (id) => {
      wakeForWork(shared, id, clock()).catch((err: unknown) =>
        o.logger.warn({ err, destinationId: id }, 'wake after a release failed; the sweeper will repair it'),
      );
    },
  });
  const worker = startDeliveryWorker({
    connection: bullConnection(o.redisUrl),
    prefix: `${o.prefix}-bull`,
    concurrency,
    run: async (delivery) => {
      active++;
      try {
        return await runner.run(delivery);
      } finally {
        active--;
      }
    },
    onPartialFailure: (job, failed) => {
      for (const { delivery, err } of failed)
        o.logger.error(
          { err, jobId: job.id, deliveryId: delivery.id, destinationId: delivery.destinationId },
          'could not start a delivery; the sweeper returns it to pending after the lease',
        );
    },
  });
  worker.on('error', (err) => o.logger.error({ err }, 'delivery worker error'));
  worker.on('failed', (job, err) =>
    o.logger.error(
      { err, jobId: job?.id, attemptsMade: job?.attemptsMade },
      'could not start the deliveries of a job; BullMQ tries it again, then the sweeper',
    ),
  );
  const ops: OpsServer = await startOpsServer({
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    registry,
    ready: async () => {
      await o.store.ping();
      await redis.ping();
    },
  });
  o.logger.info({ url: ops.url, concurrency }, 'delivery worker ready');
  return {
    url: ops.url,
    async close() {
      ops.draining();
      await worker.close(); // takes no new job, waits for the requests in flight
      await completions.flush();
      await deliverer.close();
      await queue.close();
      await ops.close();
      await shared.close();
    },
  };
}

/**
 * The delivery worker service (docs/design.md, flow 3), stateless, any number: BullMQ Workers with
 * concurrency run the same DeliveryRunner as the single box; outcomes are written to the
 * store in batches; then a retry's destination is woken for its next attempt (back through
 * the rate limiter), a 410 is announced to every process, and a freed concurrency slot
 * wakes its destination. `main.ts` starts it from the environment; tests start it here.
 */

import { healthPolicy, transformOptions } from '@sluice/config';
import { redisFollowUps, wakeInRedis } from '@sluice/distributed';
import {
  CompletionWriter,
  Deliverer,
  DeliveryRunner,
  type LookupFunction,
  OAuthTokens,
  Transforms,
  transformLogs,
} from '@sluice/engine';
import { RedisTokenCache, startDeliveryWorker } from '@sluice/redis';
import { openDistributedProcess } from '@sluice/service';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { DeliveryWorkerConfig } from './config.ts';

/** What the delivery worker runs on besides its settings (`lookup`: DNS, injected by the SSRF tests). */
export interface DeliveryWorkerDeps {
  store: Store;
  logger: Logger;
  lookup?: LookupFunction | undefined;
  clock?: () => number;
  random?: () => number;
}

export interface DeliveryWorkerService {
  url: string;
  close(): Promise<void>;
}

export async function startDeliveryWorkerService(
  config: DeliveryWorkerConfig,
  deps: DeliveryWorkerDeps,
): Promise<DeliveryWorkerService> {
  const clock = deps.clock ?? Date.now;
  let active = 0;
  // Its view of the delivery queue publishes nothing: it reads the depth for /metrics, so
  // the workers' own scrape target carries the signal they are scaled by.
  const distributed = await openDistributedProcess(config, {
    store: deps.store,
    logger: deps.logger,
    clock,
    inFlight: () => active,
  });
  const { redisState, metrics } = distributed;
  const { destinations, pacing } = redisState;
  const concurrency = config.SLUICE_DELIVERY_CONCURRENCY;
  const deliverer = new Deliverer({
    allowPrivateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
    lookup: deps.lookup,
    connections: concurrency,
    proxy: config.SLUICE_EGRESS_PROXY,
  });
  const completions = new CompletionWriter({
    store: deps.store,
    metrics,
    logger: deps.logger,
    clock,
    health: healthPolicy(config),
    ...redisFollowUps(redisState, deps.logger, clock),
  });
  // One token per OAuth2 credential for the whole fleet (Redis), asked for through the same
  // guard, pools and proxy as the deliveries.
  const tokens = new OAuthTokens({
    cache: new RedisTokenCache(redisState.redis, redisState.keys, config.SLUICE_ENCRYPTION_KEY),
    post: (url, headers, body, timeoutMs) => deliverer.post(url, headers, body, timeoutMs),
    clock,
    counted: (result) => metrics.oauthTokenRequests.inc({ result }),
  });
  const transforms = new Transforms({ ...transformOptions(config), ...transformLogs(deps.logger) });
  const runner = new DeliveryRunner({
    destinations,
    pacing,
    deliverer,
    completions,
    metrics,
    clock,
    random: deps.random ?? Math.random,
    store: deps.store,
    tokens,
    transforms,
    // At the window's room, not now: the window was full when it was released.
    wake: (id) => {
      wakeInRedis(redisState, id, clock()).catch((err: unknown) =>
        deps.logger.warn(
          { err, destinationId: id },
          'wake after a release failed; the sweeper will repair it',
        ),
      );
    },
  });
  const worker = startDeliveryWorker({
    connection: distributed.bull,
    keys: redisState.keys,
    redis: redisState.redis,
    concurrency,
    tenantQuickMs: config.SLUICE_TENANT_QUICK_MS,
    tenantOf: async (id) => (await destinations.get(id))?.tenantId,
    waiting: (shard) => distributed.queue.queues[shard]?.getWaitingCount() ?? Promise.resolve(0),
    onStuck: (shard) =>
      deps.logger.warn(
        { shard },
        'a delivery worker took no job while its queue had some waiting; started it again',
      ),
    lockMs: config.SLUICE_JOB_LOCK_MS,
    stalledIntervalMs: config.SLUICE_STALLED_INTERVAL_MS,
    // Only for a job run again after its worker died (rare): one read per delivery.
    stillClaimed: async (deliveries) => {
      const rows = await Promise.all(deliveries.map((d) => deps.store.getDelivery(d.id)));
      return new Set(
        deliveries.flatMap((d, i) => {
          const row = rows[i]?.delivery;
          const claimed =
            (row?.status === 'queued' || row?.status === 'delivering') && row.attempts === d.attempts;
          return claimed ? [d.id] : [];
        }),
      );
    },
    run: async (delivery, rerun) => {
      active++;
      try {
        return await runner.run(delivery, rerun);
      } finally {
        active--;
      }
    },
    onPartialFailure: (job, failed) => {
      for (const { delivery, err } of failed)
        deps.logger.error(
          { err, jobId: job.id, deliveryId: delivery.id, destinationId: delivery.destinationId },
          'could not start a delivery; the sweeper returns it to pending after the lease',
        );
    },
  });
  worker.on('error', (err) => deps.logger.error({ err }, 'delivery worker error'));
  // Its worker died, or lived but renewed no lock for SLUICE_JOB_LOCK_MS (an event loop held
  // that long): the job runs again, and a request it started may be repeated (numbered +1).
  worker.on('stalled', (jobId) =>
    deps.logger.warn({ jobId }, 'a delivery job stalled (its lock lapsed); it runs again'),
  );
  worker.on('failed', (job, err) =>
    deps.logger.error(
      { err, jobId: job?.id, attemptsMade: job?.attemptsMade },
      'could not start the deliveries of a job; BullMQ tries it again, then the sweeper',
    ),
  );
  const ops = await distributed.serveOps();
  deps.logger.info({ url: ops.url, concurrency }, 'delivery worker ready');
  return {
    url: ops.url,
    async close() {
      ops.draining();
      await worker.close(); // takes no new job, waits for the requests in flight
      await completions.flush();
      await deliverer.close();
      await transforms.close();
      await ops.close();
      await distributed.close();
    },
  };
}

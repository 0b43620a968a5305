/**
 * The delivery worker service (docs/design.md, flow 3), stateless, any number: BullMQ Workers with
 * concurrency run the same DeliveryRunner as the single box; outcomes are written to the
 * store in batches; then a retry's destination is woken for its next attempt (back through
 * the rate limiter), a 410 is announced to every process, and a freed concurrency slot
 * wakes its destination. `main.ts` starts it from the environment; tests start it here.
 */

import { healthPolicy } from '@sluice/config';
import { concurrencyCap } from '@sluice/core';
import { CompletionWriter, Deliverer, DeliveryRunner, type LookupFunction } from '@sluice/engine';
import { bullConnection, publishChange, startDeliveryWorker } from '@sluice/redis';
import { openDistributedProcess } from '@sluice/service';
import type { HealthChange, Store } from '@sluice/store';
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
  o: DeliveryWorkerDeps,
): Promise<DeliveryWorkerService> {
  const clock = o.clock ?? Date.now;
  let active = 0;
  // Its view of the delivery queue publishes nothing: it reads the depth for /metrics, so
  // the workers' own scrape target carries the signal they are scaled by.
  const base = await openDistributedProcess(config, { store: o.store, clock, inFlight: () => active });
  const { shared, metrics } = base;
  const { keys, redis, destinations, pacing, schedule } = shared;
  const concurrency = config.SLUICE_DELIVERY_CONCURRENCY;
  const deliverer = new Deliverer({
    allowPrivateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
    lookup: o.lookup,
    connections: concurrency,
  });
  const fail = (err: unknown, destinationId: string) =>
    o.logger.warn({ err, destinationId }, 'wake after a completion failed; the sweeper will repair it');
  // A batch moved a destination's health: every process refreshes its copy; an open
  // circuit's tick runs at the probe time, a circuit just closed at once (docs/adr/0007).
  const healthChanged = async ({ destinationId: id, from, health }: HealthChange): Promise<void> => {
    await destinations.refresh(id);
    await publishChange(redis, keys, id);
    const now = clock();
    if (health.state === 'suspended') await schedule.wake(id, Math.max(now, health.nextProbeAt ?? now));
    else if (from === 'suspended') await schedule.wake(id, now);
  };
  const completions = new CompletionWriter({
    store: o.store,
    metrics,
    logger: o.logger,
    clock,
    flushMs: 5,
    health: healthPolicy(config),
    onHealth: (change) => {
      healthChanged(change).catch((err) => fail(err, change.destinationId));
    },
    onSettled: ({ destination, outcome, completed }) => {
      const id = destination.id;
      // An exhausted attempt the breaker held is pending again at `holdAt`.
      const retryAt = outcome.transition === 'exhaust' ? (completed.holdAt ?? null) : outcome.nextAttemptAt;
      if (outcome.disableDestination) {
        o.logger.warn({ destinationId: id }, 'destination answered 410 Gone: disabled');
        void destinations
          .refresh(id)
          .then(() => publishChange(redis, keys, id))
          .catch((err) => fail(err, id));
      } else if (retryAt !== null) {
        schedule.wake(id, retryAt).catch((err) => fail(err, id));
      }
    },
    // A freed slot of a capped destination (a fifo one is capped at 1): its next may go at
    // once, without waiting for the completion's batch to commit.
    onFinished: ({ destination }) => {
      if (concurrencyCap(destination.ordering, destination.maxConcurrency) === null) return;
      const id = destination.id;
      schedule.wakeForWork(id, destinations, pacing, clock()).catch((err) => fail(err, id));
    },
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
      schedule.wakeForWork(id, destinations, pacing, clock()).catch((err) => fail(err, id));
    },
  });
  const worker = startDeliveryWorker({
    connection: bullConnection(config.REDIS_URL),
    prefix: `${config.SLUICE_REDIS_PREFIX}-bull`,
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
  const ops = await base.serveOps();
  o.logger.info({ url: ops.url, concurrency }, 'delivery worker ready');
  return {
    url: ops.url,
    async close() {
      ops.draining();
      await worker.close(); // takes no new job, waits for the requests in flight
      await completions.flush();
      await deliverer.close();
      await ops.close();
      await base.close();
    },
  };
}

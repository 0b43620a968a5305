/**
 * The single box's delivery queue and its workers, in process: a FIFO of published
 * deliveries drained by up to `concurrency` concurrent requests. Completions are written in
 * batches (one transaction per few milliseconds); what follows a completion (a retry's wake,
 * a disabled destination) happens only after its batch commits, so a tick never looks for a
 * retry the store does not have yet.
 *
 * A delivery's id stays in `live` from publish until its completion commits: the sweeper
 * never requeues one of those.
 */

import { type AttemptOutcome, decideOutcome, newId, PERIOD_MS } from '@sluice/core';
import type { Logger } from 'pino';
import type { Deliverer } from './deliver.ts';
import { type DestinationCache, signingSecrets } from './destinations.ts';
import type { Publisher } from './limiter.ts';
import type { EngineMetrics } from './metrics.ts';
import type { Pacer } from './pacer.ts';
import type { ClaimedDelivery, CompletedAttempt, Destination, Store } from './store.ts';

export interface LocalQueueDeps {
  store: Store;
  destinations: DestinationCache;
  pacer: Pacer;
  deliverer: Deliverer;
  metrics: EngineMetrics;
  logger: Logger;
  clock: () => number;
  random: () => number;
  concurrency: number;
  flushMs: number;
  /** After a completion commits: the destination may have work or room again. */
  onSettled(destination: Destination, outcome: AttemptOutcome): void;
}

interface Job {
  destination: Destination;
  delivery: ClaimedDelivery;
}

interface Pending {
  completed: CompletedAttempt;
  destination: Destination;
  outcome: AttemptOutcome;
}

export class LocalQueue implements Publisher {
  readonly live = new Set<string>();
  private jobs: Job[] = [];
  private head = 0;
  private active = 0;
  private stopping = false;
  private buffer: Pending[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly drained: (() => void)[] = [];
  private readonly deps: LocalQueueDeps;

  constructor(deps: LocalQueueDeps) {
    this.deps = deps;
  }

  get depth(): number {
    return this.jobs.length - this.head;
  }

  publish(destination: Destination, deliveries: ClaimedDelivery[]): void {
    for (const delivery of deliveries) {
      this.live.add(delivery.id);
      this.jobs.push({ destination, delivery });
    }
    this.pump();
  }

  /** Starts no more requests; waits for those in flight and writes every completion. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.active > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
    await this.flush();
  }

  private pump(): void {
    while (!this.stopping && this.active < this.deps.concurrency && this.head < this.jobs.length) {
      const job = this.jobs[this.head] as Job;
      this.jobs[this.head++] = undefined as unknown as Job;
      if (this.head > 4_096 && this.head * 2 > this.jobs.length) {
        this.jobs = this.jobs.slice(this.head);
        this.head = 0;
      }
      this.active++;
      this.run(job).finally(() => {
        this.active--;
        if (this.stopping && this.active === 0) for (const resolve of this.drained.splice(0)) resolve();
        this.pump();
      });
    }
  }

  private async run({ destination: published, delivery }: Job): Promise<void> {
    const { pacer, deliverer, clock, random, metrics, destinations } = this.deps;
    // Live settings (url, secrets, timeout) as of the start of the request. A destination
    // deleted since the publish is gone from the cache: its deliveries are cancelled.
    const destination = destinations.peek(delivery.destinationId);
    const pace = pacer.of(delivery.destinationId, PERIOD_MS[(destination ?? published).rateLimit.period]);
    if (destination === undefined) {
      pace.queued--;
      this.live.delete(delivery.id);
      return;
    }
    pace.queued--;
    pace.inFlight++;
    const startedAt = clock();
    const handle = pace.window.start(startedAt);
    let finishedAt = startedAt;
    let report: Awaited<ReturnType<Deliverer['attempt']>>;
    try {
      report = await deliverer.attempt(
        {
          url: destination.url,
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          body: delivery.payload,
          secrets: signingSecrets(destination, startedAt),
          timeoutMs: destination.timeoutMs,
        },
        Math.floor(startedAt / 1_000),
        () => pace.window.written(handle, clock()),
      );
    } finally {
      finishedAt = clock();
      pace.window.finish(handle, finishedAt);
      pace.inFlight--;
    }
    const attemptNo = delivery.attempts + 1;
    const outcome = decideOutcome(
      report.result,
      attemptNo - delivery.attemptBase,
      destination.retry,
      finishedAt,
      random,
    );
    const { result } = report;
    metrics.attemptDuration.observe(
      { result: result.kind === 'response' ? `${String(Math.floor(result.statusCode / 100))}xx` : 'error' },
      (finishedAt - startedAt) / 1_000,
    );
    if (outcome.transition === 'succeed')
      metrics.deliveryLatency.observe((finishedAt - delivery.eventCreatedAt) / 1_000);
    this.buffer.push({
      destination,
      outcome,
      completed: {
        attempt: {
          id: newId('att'),
          deliveryId: delivery.id,
          destinationId: delivery.destinationId,
          attempt: attemptNo,
          startedAt,
          finishedAt,
          statusCode: result.kind === 'response' ? result.statusCode : null,
          errorCode: result.kind === 'error' ? result.code : null,
          errorMessage: result.kind === 'error' ? result.message : null,
          responseExcerpt: report.responseExcerpt,
        },
        status:
          outcome.transition === 'succeed'
            ? 'delivered'
            : outcome.transition === 'exhaust'
              ? 'dead'
              : 'pending',
        nextAttemptAt: outcome.nextAttemptAt,
        disableDestination: outcome.disableDestination,
      },
    });
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== undefined) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, this.deps.flushMs);
  }

  /** Writes buffered completions in one transaction, then runs what follows them. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      const batch = this.buffer;
      if (batch.length === 0) return;
      this.buffer = [];
      try {
        await this.deps.store.completeAttempts(
          batch.map((p) => p.completed),
          this.deps.clock(),
        );
      } catch (err) {
        this.deps.logger.error({ err, count: batch.length }, 'writing completions failed; will retry');
        this.buffer = batch.concat(this.buffer);
        this.scheduleFlush();
        return;
      }
      for (const { completed, destination, outcome } of batch) {
        this.live.delete(completed.attempt.deliveryId);
        this.deps.metrics.deliveries.inc({ outcome: OUTCOME_LABEL[outcome.transition] });
        this.deps.onSettled(destination, outcome);
      }
    });
    return this.flushing;
  }
}

const OUTCOME_LABEL: Record<AttemptOutcome['transition'], string> = {
  succeed: 'delivered',
  retry: 'retry',
  disable: 'disabled',
  exhaust: 'dead',
};

/**
 * Completions are written in batches: one transaction per few milliseconds, however many
 * requests finished (graphile-worker's completeJobs does the same). What follows a
 * completion (a retry's wake, a disabled destination) runs only after its batch commits,
 * so a tick never looks for a retry the store does not have yet.
 */

import {
  type AttemptOutcome,
  classifyAttempt,
  DEFAULT_HEALTH_POLICY,
  type HealthPolicy,
  isHeld,
} from '@sluice/core';
import type { CompletedAttempt, CompletionChanges, Destination, HealthChange, Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { EngineMetrics } from '../ops/metrics.ts';

/**
 * How long a completion waits for others to share its batch: long enough that the requests
 * finishing together share one transaction, short enough not to hold a retry's wake or a
 * job's completion back.
 */
const COMPLETION_FLUSH_MS = 5;

export interface Completion {
  completed: CompletedAttempt;
  destination: Destination;
  outcome: AttemptOutcome;
}

export interface CompletionWriterDeps {
  store: Store;
  metrics: EngineMetrics;
  logger: Logger;
  clock: () => number;
  /** Default COMPLETION_FLUSH_MS; a failed write is tried again after twenty times this. */
  flushMs?: number | undefined;
  /** After a completion commits: the destination may have work or room again. */
  onSettled(completion: Completion): void;
  /**
   * As soon as a request is over, before its completion is written: a freed concurrency slot
   * (a capped or fifo destination) need not wait for the batch to commit.
   */
  onFinished?(completion: Completion): void;
  /** The circuit breaker's settings (docs/adr/0007). */
  health?: HealthPolicy;
  /**
   * After a batch moved a destination's health (a transition, or a failed probe): every
   * cached copy must be refreshed and its tick rescheduled.
   */
  onHealth?(change: HealthChange): void;
  /**
   * After a batch's operational events (`sluice.…`, accepted in its transaction) gave this
   * destination deliveries: it has work now.
   */
  onNotified?(destinationId: string): void;
}

const OUTCOME_LABEL: Record<AttemptOutcome['transition'], string> = {
  succeed: 'delivered',
  retry: 'retry',
  disable: 'disabled',
  exhaust: 'dead',
  cancel: 'cancelled',
};

/** A buffered completion, and what its batch's commit resolves. */
interface Buffered {
  completion: Completion;
  committed: () => void;
}

export class CompletionWriter {
  private buffer: Buffered[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly deps: CompletionWriterDeps;
  private readonly flushMs: number;

  constructor(deps: CompletionWriterDeps) {
    this.deps = deps;
    this.flushMs = deps.flushMs ?? COMPLETION_FLUSH_MS;
  }

  /**
   * Buffers a completion for the next batch. The promise resolves once that batch committed
   * (a failed write is tried again; it never rejects): the delivery worker completes a job
   * only then, so a worker that dies in between leaves a stalled job, run again, not a
   * claim that waits for the sweeper's lease.
   */
  add(completion: Completion): Promise<void> {
    const written = new Promise<void>((committed) => this.buffer.push({ completion, committed }));
    this.deps.onFinished?.(completion);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs);
    return written;
  }

  /** Writes buffered completions in one transaction, then runs what follows them. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
      const batch = this.buffer;
      if (batch.length === 0) return;
      this.buffer = [];
      let changes: CompletionChanges;
      try {
        changes = await this.deps.store.completeAttempts(
          batch.map((b) => b.completion.completed),
          this.deps.clock(),
          this.deps.health ?? DEFAULT_HEALTH_POLICY,
        );
      } catch (err) {
        this.deps.logger.error({ err, count: batch.length }, 'writing completions failed; will retry');
        this.buffer = batch.concat(this.buffer);
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          void this.flush();
        }, this.flushMs * 20);
        return;
      }
      for (const change of changes) {
        if (change.from !== change.health.state) {
          this.deps.metrics.healthTransitions.inc({ to: change.health.state });
          this.deps.logger.warn(
            { destinationId: change.destinationId, from: change.from, to: change.health.state },
            'destination health changed',
          );
        }
        this.deps.onHealth?.(change);
      }
      for (const id of changes.notified ?? []) this.deps.onNotified?.(id);
      const stateAfter = new Map(changes.map((c) => [c.destinationId, c.health.state]));
      for (const { completion, committed } of batch) {
        committed();
        const { attempt } = completion.completed;
        // Held by the breaker (as the store decided, from this batch's changes or the cached
        // health): not a retry spent, and never dead.
        const state = stateAfter.get(attempt.destinationId) ?? completion.destination.health.state;
        const held = isHeld(
          classifyAttempt(attempt.statusCode, attempt.errorCode),
          state,
          completion.completed.probe === true,
        );
        const outcome = held ? 'held' : OUTCOME_LABEL[completion.outcome.transition];
        this.deps.metrics.deliveries.inc({ outcome });
        this.deps.onSettled(completion);
      }
    });
    return this.flushing;
  }
}

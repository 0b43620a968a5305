/**
 * Completions are written in batches: one transaction per few milliseconds, however many
 * requests finished (graphile-worker's completeJobs does the same). What follows a
 * completion (a retry's wake, a disabled destination) runs only after its batch commits,
 * so a tick never looks for a retry the store does not have yet.
 */

import type { AttemptOutcome } from '@sluice/core';
import type { Logger } from 'pino';
import type { EngineMetrics } from './metrics.ts';
import type { CompletedAttempt, Destination, Store } from './store.ts';

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
  flushMs: number;
  /** After a completion commits: the destination may have work or room again. */
  onSettled(completion: Completion): void;
  /**
   * As soon as a request is over, before its completion is written: a freed concurrency slot
   * (a capped or fifo destination) need not wait for the batch to commit.
   */
  onFinished?(completion: Completion): void;
}

const OUTCOME_LABEL: Record<AttemptOutcome['transition'], string> = {
  succeed: 'delivered',
  retry: 'retry',
  disable: 'disabled',
  exhaust: 'dead',
};

export class CompletionWriter {
  private buffer: Completion[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly deps: CompletionWriterDeps;

  constructor(deps: CompletionWriterDeps) {
    this.deps = deps;
  }

  add(completion: Completion): void {
    this.buffer.push(completion);
    this.deps.onFinished?.(completion);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.deps.flushMs);
  }

  /** Writes buffered completions in one transaction, then runs what follows them. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
      const batch = this.buffer;
      if (batch.length === 0) return;
      this.buffer = [];
      try {
        await this.deps.store.completeAttempts(
          batch.map((c) => c.completed),
          this.deps.clock(),
        );
      } catch (err) {
        this.deps.logger.error({ err, count: batch.length }, 'writing completions failed; will retry');
        this.buffer = batch.concat(this.buffer);
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          void this.flush();
        }, this.deps.flushMs * 20);
        return;
      }
      for (const completion of batch) {
        this.deps.metrics.deliveries.inc({ outcome: OUTCOME_LABEL[completion.outcome.transition] });
        this.deps.onSettled(completion);
      }
    });
    return this.flushing;
  }
}

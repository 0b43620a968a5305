/**
 * Retention: delivered and cancelled deliveries, their attempts, and events with nothing
 * left to deliver are deleted once older than the retention age, in small batches so no
 * transaction holds the store for long. Dead deliveries are kept until replayed or
 * deleted. Idempotency keys live as long as their event (at least a day: the retention
 * age cannot be set lower).
 */

import type { RetentionResult, Store } from '@sluice/store';
import type { Logger } from 'pino';

export const MIN_RETENTION_MS = 86_400_000;
/** How often retention runs: expired data waits at most this long past its age. */
const RETENTION_INTERVAL_MS = 60_000;
/** Rows one statement deletes: small enough that no transaction holds the store for long. */
const RETENTION_BATCH = 500;

export interface RetentionOptions {
  store: Store;
  logger: Logger;
  clock: () => number;
  retentionMs: number;
  /** Default RETENTION_INTERVAL_MS (tests run it by hand). */
  intervalMs?: number;
  /** Default RETENTION_BATCH. */
  batch?: number;
}

export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly options: Required<RetentionOptions>;

  constructor(options: RetentionOptions) {
    this.options = {
      ...options,
      retentionMs: Math.max(MIN_RETENTION_MS, options.retentionMs),
      intervalMs: options.intervalMs ?? RETENTION_INTERVAL_MS,
      batch: options.batch ?? RETENTION_BATCH,
    };
  }

  /** Deletes everything expired, batch by batch, yielding between batches. */
  async run(): Promise<RetentionResult> {
    const { store, clock, retentionMs, batch } = this.options;
    const total: RetentionResult = { deliveries: 0, attempts: 0, events: 0, transitions: 0 };
    const before = clock() - retentionMs;
    while (!this.stopped) {
      const done = await store.deleteExpired(before, batch);
      total.deliveries += done.deliveries;
      total.attempts += done.attempts;
      total.events += done.events;
      total.transitions += done.transitions;
      if (done.deliveries < batch && done.events < batch && done.transitions < batch) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (total.deliveries + total.events + total.transitions > 0)
      this.options.logger.info(total, 'retention deleted expired data');
    return total;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running = this.run().catch((err: unknown) =>
        this.options.logger.error({ err }, 'retention failed'),
      );
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

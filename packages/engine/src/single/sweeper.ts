/**
 * The sweeper (docs/design.md, flow 5): the store is the truth, the schedule a cache of it.
 * Periodically it
 *   - re-wakes active destinations that have pending deliveries but no schedule entry
 *     (a wake that was lost, or never made);
 *   - returns deliveries left `queued`/`delivering` past their lease to `pending`
 *     (nothing in this process holds them: a crash, a bug) and wakes their destinations;
 *   - forgets the pacing state of idle destinations;
 *   - cancels deliveries left pending on a deleted destination (an ingest raced the delete).
 */

import type { Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { EngineMetrics } from '../ops/metrics.ts';
import type { Pacer } from '../pace/memory-pacing.ts';
import type { MemorySchedule } from '../tick/memory-schedule.ts';

export interface SweeperDeps {
  store: Store;
  schedule: MemorySchedule;
  pacer: Pacer;
  live: ReadonlySet<string>;
  logger: Logger;
  metrics: EngineMetrics;
  clock: () => number;
  leaseMs: number;
}

/** What one sweep repaired (each kind is a count of destinations or deliveries). */
interface Repairs {
  /** Destinations with pending work and no schedule entry, woken. */
  rewoken: number;
  /** Deliveries claimed past their lease and in no job, returned to pending. */
  requeued: number;
  /** Deliveries of a deleted destination, cancelled. */
  orphans: number;
}

/**
 * Counts a sweep's repairs (`sluice_sweeper_repairs_total`) and warns of them: a rewoken or
 * requeued delivery follows a lost wake, a crash or a loss of Redis; an orphan, an ingest that
 * raced a delete. A sweep that repaired nothing says nothing. Both shapes' sweepers report so.
 */
export function reportRepairs(logger: Logger, metrics: EngineMetrics, repairs: Repairs): void {
  const { rewoken, requeued, orphans } = repairs;
  if (rewoken + requeued + orphans === 0) return;
  for (const [kind, n] of Object.entries(repairs)) if (n > 0) metrics.repairs.inc({ kind }, n);
  logger.warn({ rewoken, requeued, orphans }, 'sweeper repaired the schedule');
}

async function sweep(deps: SweeperDeps): Promise<{ rewoken: number; requeued: number }> {
  const { store, schedule, pacer, live, clock, leaseMs } = deps;
  let rewoken = 0;
  for (const { destinationId, nextPendingAt } of await store.pendingDestinations()) {
    if (schedule.isScheduled(destinationId)) continue;
    schedule.wake(destinationId, nextPendingAt);
    rewoken++;
  }
  const now = clock();
  const requeued = await store.requeue(now - leaseMs, live, now);
  let count = 0;
  for (const [destinationId, n] of requeued) {
    schedule.wake(destinationId, now);
    count += n;
  }
  pacer.collect(now, (id) => schedule.isScheduled(id));
  const orphans = await store.cancelOrphans(now);
  reportRepairs(deps.logger, deps.metrics, { rewoken, requeued: count, orphans });
  return { rewoken, requeued: count };
}

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly deps: SweeperDeps;
  private readonly intervalMs: number;

  constructor(deps: SweeperDeps, intervalMs: number) {
    this.deps = deps;
    this.intervalMs = intervalMs;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running = sweep(this.deps).catch((err: unknown) =>
        this.deps.logger.error({ err }, 'sweep failed'),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

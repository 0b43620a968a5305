/**
 * The sweeper (docs/design.md flow 5), for both shapes: the store is the truth, the schedule
 * and the pace a cache of it. Every `SLUICE_SWEEP_INTERVAL_MS`, one sweep at a time:
 *
 *   1. an active destination with pending work and no schedule entry (a lost wake, or one
 *      never made) is woken at its earliest due time. Where a tick elsewhere may take the
 *      work between the listing and the look at the schedule (`SweepPorts.pendingAgain`), the
 *      work is read again first: none left, nothing to repair; due later than listed, woken
 *      but not counted (whoever made it pending wakes it too);
 *   2. claims that nothing holds past their lease return to pending, and their destinations
 *      are woken now (`SweepPorts.requeueStale`: what "nothing holds" means is the shape's);
 *   3. the pace of idle destinations is forgotten, where the shape keeps it (the single box);
 *   4. deliveries an ingest left pending on a destination deleted meanwhile are cancelled;
 *   5. what was repaired is counted and logged (`reportRepairs`).
 *
 * A port may answer at once or with a promise; one that answers at once is not awaited, so
 * the single box's pass over its schedule runs as one step, no tick settling halfway.
 */

import type { Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { EngineMetrics } from '../ops/metrics.ts';

/** What one sweep repaired (each kind is a count of destinations or deliveries). */
interface Repairs {
  /** Destinations with pending work and no schedule entry, woken. */
  rewoken: number;
  /** Claimed deliveries that nothing held, returned to pending. */
  requeued: number;
  /** Deliveries of a deleted destination, cancelled. */
  orphans: number;
}

/**
 * Counts a sweep's repairs (`sluice_sweeper_repairs_total`) and warns of them: a rewoken or
 * requeued delivery follows a lost wake, a crash or a loss of Redis; an orphan, an ingest that
 * raced a delete. A sweep that repaired nothing says nothing.
 */
export function reportRepairs(logger: Logger, metrics: EngineMetrics, repairs: Repairs): void {
  const { rewoken, requeued, orphans } = repairs;
  if (rewoken + requeued + orphans === 0) return;
  for (const [kind, n] of Object.entries(repairs)) if (n > 0) metrics.repairs.inc({ kind }, n);
  logger.warn({ rewoken, requeued, orphans }, 'sweeper repaired the schedule');
}

/** What a shape gives the sweep to act with. */
export interface SweepPorts {
  store: Pick<Store, 'pendingDestinations' | 'cancelOrphans'>;
  logger: Logger;
  metrics: EngineMetrics;
  clock: () => number;
  /** Which of these destinations have a schedule entry or a running tick. */
  scheduledAmong(destinationIds: readonly string[]): ReadonlySet<string> | Promise<ReadonlySet<string>>;
  /**
   * When the destination's pending work is due, read again once the schedule was seen
   * without it (null: none left). Absent: the listing stands, and a tick that took the work
   * meanwhile costs one needless wake.
   */
  pendingAgain?(destinationId: string): Promise<number | null>;
  /** Schedules the destination's tick no later than `at` (sooner only). */
  wake(destinationId: string, at: number): unknown;
  /** Returns the claims that nothing holds past their lease to pending: how many, by destination. */
  requeueStale(now: number): Promise<Map<string, number>>;
  /** Forgets the pace of destinations with nothing left in it (absent: the pace expires by itself). */
  forgetIdle?(now: number): void;
}

export async function sweepOnce(ports: SweepPorts): Promise<Repairs> {
  const { store, clock } = ports;
  const pending = await store.pendingDestinations();
  const among = ports.scheduledAmong(pending.map((p) => p.destinationId));
  const scheduled = among instanceof Promise ? await among : among;
  let rewoken = 0;
  for (const listed of pending) {
    const { destinationId } = listed;
    if (scheduled.has(destinationId)) continue;
    const nextPendingAt =
      ports.pendingAgain === undefined ? listed.nextPendingAt : await ports.pendingAgain(destinationId);
    if (nextPendingAt === null) continue;
    const woken = ports.wake(destinationId, nextPendingAt);
    if (woken instanceof Promise) await woken;
    if (nextPendingAt <= listed.nextPendingAt) rewoken++;
  }
  const now = clock();
  const requeued = await ports.requeueStale(now);
  let count = 0;
  for (const [destinationId, n] of requeued) {
    const woken = ports.wake(destinationId, now);
    if (woken instanceof Promise) await woken;
    count += n;
  }
  ports.forgetIdle?.(now);
  const orphans = await store.cancelOrphans(now);
  const repairs = { rewoken, requeued: count, orphans };
  reportRepairs(ports.logger, ports.metrics, repairs);
  return repairs;
}

/** Runs a sweep every interval, one at a time: a sweep that outlasts the interval is not joined by another. */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly sweep: () => Promise<unknown>;
  private readonly logger: Logger;

  constructor(sweep: () => Promise<unknown>, logger: Logger) {
    this.sweep = sweep;
    this.logger = logger;
  }

  start(intervalMs: number): void {
    let sweeping = false;
    this.timer = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      this.running = this.sweep()
        .catch((err: unknown) => this.logger.error({ err }, 'sweep failed'))
        .finally(() => {
          sweeping = false;
        });
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops sweeping; resolves once the sweep in progress, if any, is over. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

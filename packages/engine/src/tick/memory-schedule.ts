/**
 * The single-box schedule: one entry per scheduled destination, keyed by the due time of
 * its next tick, with one timer armed for the earliest. The distributed shape keeps the
 * same entries in a Redis sorted set.
 *
 * An entry is in one of three states:
 *
 *   (absent) ──wake(at)──▶ waiting(due) ──due time──▶ running ──tick returns next──▶ waiting(next)
 *                            │   ▲                       │
 *                            └───┘ wake(at < due):       ├──tick returns null, no wake meanwhile──▶ (absent)
 *                              due = at (sooner only)    └──wake during the run──▶ waiting(min(next, wake))
 *
 * A wake never moves a tick later (Redis `ZADD LT`). A wake that arrives while the tick
 * runs is remembered and wins over the tick's decision to shut down: no lost wake-up.
 * One destination's tick never runs twice at once.
 */

import type { Schedule } from './schedule.ts';

export type TickFn = (destinationId: string, due: number) => Promise<number | null>;

export interface ScheduleOptions {
  clock: () => number;
  tick: TickFn;
  onTickError: (destinationId: string, err: unknown) => void;
  /** Retry delay of a tick that threw. */
  errorBackoffMs?: number;
}

export class MemorySchedule implements Schedule {
  private readonly waiting = new Map<string, number>();
  /** Running ticks, with the earliest wake that arrived during the run. */
  private readonly running = new Map<string, number | null>();
  /** Min-heap of [due, id]; stale pairs (superseded dues) are skipped when popped. */
  private readonly heap: [number, string][] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly options: ScheduleOptions;
  private readonly idle: (() => void)[] = [];

  constructor(options: ScheduleOptions) {
    this.options = options;
  }

  /** Schedules a tick no later than `at`. Idempotent; only ever moves a tick sooner. */
  wake(destinationId: string, at: number): void {
    if (this.stopped) return;
    if (this.running.has(destinationId)) {
      const woken = this.running.get(destinationId);
      if (woken === null || woken === undefined || at < woken) this.running.set(destinationId, at);
      return;
    }
    const due = this.waiting.get(destinationId);
    if (due !== undefined && due <= at) return;
    this.waiting.set(destinationId, at);
    this.push(at, destinationId);
    this.arm();
  }

  isScheduled(destinationId: string): boolean {
    return this.waiting.has(destinationId) || this.running.has(destinationId);
  }

  /** When the destination's next tick is due (undefined when unscheduled or running). */
  dueOf(destinationId: string): number | undefined {
    return this.waiting.get(destinationId);
  }

  get size(): number {
    return this.waiting.size + this.running.size;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Stops ticking; resolves when no tick is running any more. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running.size === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.options.clock();
    while (!this.stopped && this.heap.length > 0) {
      const [due, id] = this.heap[0] as [number, string];
      if (due > now) break;
      this.pop();
      if (this.waiting.get(id) !== due) continue; // superseded by a sooner wake
      this.waiting.delete(id);
      this.run(id, due);
    }
    this.arm();
  };

  private run(id: string, due: number): void {
    this.running.set(id, null);
    this.options.tick(id, due).then(
      (next) => this.settle(id, next),
      (err: unknown) => {
        try {
          this.options.onTickError(id, err);
        } finally {
          this.settle(id, this.options.clock() + (this.options.errorBackoffMs ?? 1_000));
        }
      },
    );
  }

  private settle(id: string, next: number | null): void {
    const woken = this.running.get(id) ?? null;
    this.running.delete(id);
    const at = next === null ? woken : woken === null ? next : Math.min(next, woken);
    if (at !== null) this.wake(id, at);
    if (this.stopped && this.running.size === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  private arm(): void {
    if (this.stopped || this.heap.length === 0) return;
    const at = (this.heap[0] as [number, string])[0];
    if (this.timer !== undefined && this.timerAt <= at) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.fire, Math.max(0, at - this.options.clock()));
  }

  private push(due: number, id: string): void {
    const h = this.heap;
    h.push([due, id]);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((h[parent] as [number, string])[0] <= due) break;
      [h[i], h[parent]] = [h[parent] as [number, string], h[i] as [number, string]];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop() as [number, string];
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && (h[l] as [number, string])[0] < (h[m] as [number, string])[0]) m = l;
      if (r < h.length && (h[r] as [number, string])[0] < (h[m] as [number, string])[0]) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m] as [number, string], h[i] as [number, string]];
      i = m;
    }
  }
}

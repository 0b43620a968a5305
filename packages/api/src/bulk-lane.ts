/**
 * The bulk lane (docs/operations.md "Tenants' shares of the delivery slots", one tenant's
 * backlog): a batch of more than LIGHT_EVENTS events is accepted one at a time per API
 * process, the tenants' batches in turn, and while other requests have come in within the last LIGHT_WINDOW_MS, each such
 * batch waits after the one before for as long as that one took. So a backlog posted in
 * parallel batches takes at most about half of the process (the single box's one main thread
 * and SQLite writer, a distributed API and its share of Postgres) while others post, and all
 * of it when it is alone. A 1,000-event batch costs tens of milliseconds of the main thread;
 * four of them at once held it, and every other tenant's posts, ticks and completions queued
 * behind them (docs/performance.md). While others post, a batch also goes into the store in
 * slices (`AcceptOptions.slices`): the single box's SQLite writer then takes others' writes
 * between its parts instead of after its ~20 ms transaction.
 */

/** More events than this in one request take the bulk lane. */
export const LIGHT_EVENTS = 100;
/** Light requests seen within this long make the lane leave room between batches. */
const LIGHT_WINDOW_MS = 1_000;

export class BulkLane {
  private readonly clock: () => number;
  private lastLightAt = Number.NEGATIVE_INFINITY;
  private running = false;
  /** Per tenant, its batches waiting; a Map's order is the round robin. */
  private readonly waiting = new Map<string, (() => void)[]>();
  /** When the next batch may start while light requests are about. */
  private freeAt = Number.NEGATIVE_INFINITY;

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  /** A request of at most LIGHT_EVENTS events came in. */
  noteLight(): void {
    this.lastLightAt = this.clock();
  }

  /**
   * Whether light requests came in within LIGHT_WINDOW_MS: a batch then also goes into the
   * store in slices (`AcceptOptions.slices`), so that others' writes run between its parts.
   */
  othersActive(): boolean {
    return this.clock() - this.lastLightAt <= LIGHT_WINDOW_MS;
  }

  /**
   * Resolves once this batch of `tenant`'s may run; call the answer when it is over. Waiting
   * batches go round robin by tenant: one tenant's many batches do not queue another's.
   */
  async enter(tenant: string): Promise<() => void> {
    // Handed over by the one before (still `running`), or the lane is free.
    if (this.running)
      await new Promise<void>((go) => {
        const queue = this.waiting.get(tenant);
        if (queue) queue.push(go);
        else this.waiting.set(tenant, [go]);
      });
    this.running = true;
    const wait = this.freeAt - this.clock();
    if (wait > 0 && this.othersActive()) await new Promise((r) => setTimeout(r, wait));
    const startedAt = this.clock();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const now = this.clock();
      this.freeAt = now + (now - startedAt);
      const next = this.next();
      if (next) next();
      else this.running = false;
    };
  }

  /** The next tenant's oldest batch; that tenant goes to the end of the round robin. */
  private next(): (() => void) | undefined {
    const first = this.waiting.entries().next();
    if (first.done) return undefined;
    const [tenant, queue] = first.value;
    this.waiting.delete(tenant);
    const go = queue.shift();
    if (queue.length > 0) this.waiting.set(tenant, queue);
    return go;
  }
}

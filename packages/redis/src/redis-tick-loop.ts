/**
 * The distributed tick loop: it runs the ticks of the Redis schedule (the same entries as the
 * single box's MemorySchedule, in sorted sets, shared by any number of rate-limiter replicas;
 * docs/adr/0002).
 *
 * Each replica loops over the shards: claim the due ticks (a Lua script moves them to
 * leases, so one replica runs each), run them, settle them (reschedule, or leave the
 * schedule unless woken meanwhile), then sleep until the shard's next due time — at most
 * `maxIdleMs`, and less when a wake moves a tick to the head of a schedule (the `kick`
 * channel) or one of this replica's settles schedules a tick sooner than its loop means to
 * look. A kick that lands while a loop is claiming, not sleeping, is not lost: the loop
 * counts kicks and claims again instead of sleeping on a due time it read before the kick.
 * A replica that dies mid-tick leaves a lease that expires and is claimed again; a running
 * tick extends its lease, so a slow one is not run again beside itself.
 * No tick runs unless the `epoch` key says the state was built from the store ('ready').
 */

import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';
import { type ClaimedTick, Scripts } from './scripts.ts';

/**
 * A tick; `fence` answers its current lease token (after any renewal in flight), for the
 * step that counts its deliveries to refuse a tick whose lease another replica took.
 */
export type TickFn = (
  destinationId: string,
  due: number,
  fence: () => Promise<string>,
) => Promise<number | null>;

/**
 * A claimed tick's lease unless given (the services pass `SLUICE_TICK_LEASE_MS`): a replica
 * that stops for this long (killed, or frozen) loses its ticks to the others, which then run
 * them. A live one extends the lease every third of it, so a slow tick keeps its lease; only
 * a tick whose replica stopped renewing (killed, or frozen for two thirds of the lease or
 * more) is taken over, and a frozen one is fenced (`paceRoom`) if it comes back: it publishes
 * nothing, and the sweeper returns what it claimed (docs/operations.md, "What a killed
 * process leaves").
 */
const TICK_LEASE_MS = 10_000;

/**
 * The longest a shard's loop sleeps without looking at the schedule. It knows when its next
 * tick is due (it sleeps until then), a wake that moves a tick to the head kicks it (pub/sub),
 * and its own settles move its sleep sooner; a replica that stops kicks the others for the
 * ticks it settled last, and the rebuild after a loss of Redis kicks when the state is ready.
 * The look after the longest sleep catches a kick lost while the subscriber reconnected.
 * 1 s: short enough for that, and an idle replica wakes rarely enough to cost next to nothing
 * (docs/performance.md, Decisions).
 */
const MAX_IDLE_MS = 1_000;

export interface RedisTickLoopOptions {
  redis: RedisClient;
  /** A connection for SUBSCRIBE (no other commands on it); without it, only polling (MAX_IDLE_MS). */
  subscriber?: RedisClient | undefined;
  keys: Keys;
  tick: TickFn;
  clock: () => number;
  onTickError: (destinationId: string, err: unknown) => void;
  /**
   * Told of every tick this replica ran, once it settled (a debug log, tests): it ran from
   * `startedAt` to `finishedAt`, before its settle let any replica claim the next one.
   */
  onTick?: (tick: { destinationId: string; due: number; startedAt: number; finishedAt: number }) => void;
  /**
   * Told, once per claim, of the ticks it took over from expired leases: the replica running
   * them died or froze mid-tick (a metric, a warning).
   */
  onTakeover?: (destinationIds: string[]) => void;
  /** How long a claimed tick may run before another replica may take it over (TICK_LEASE_MS). */
  leaseMs?: number;
  /** Longest sleep between two claims of a shard. */
  maxIdleMs?: number;
  /** Most ticks claimed per call. */
  batch?: number;
  /** Retry delay of a tick that threw. */
  errorBackoffMs?: number;
}

export class RedisTickLoop {
  readonly scripts: Scripts;
  private readonly options: Required<Omit<RedisTickLoopOptions, 'subscriber' | 'onTick' | 'onTakeover'>> &
    Pick<RedisTickLoopOptions, 'subscriber' | 'onTick' | 'onTakeover'>;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  private readonly loops: Promise<void>[] = [];
  /** Sleeping loops' wake-ups, each with its shard (none: every shard's). */
  private readonly sleepers = new Map<() => void, number | undefined>();
  /** Kicks so far, per shard; a loop that saw one of its shard's while claiming claims again instead of sleeping. */
  private readonly kicks: number[] = [];
  /** Per shard: when its loop claims next at the latest (ms since the epoch). */
  private readonly wakeAt: number[] = [];
  /** Per shard: the soonest due time one of this replica's settles left since its last claim. */
  private readonly settledAt: number[] = [];
  /** Per shard: moves the sleeping loop's wake-up sooner (absent while it claims). */
  private readonly rearm: (((at: number) => void) | undefined)[] = [];
  /**
   * A kick names the destination whose tick moved to the head of its schedule: only its
   * shard's loop looks (with many shards, waking them all would be a claim per shard per
   * wake). `*` (or none): every loop looks.
   */
  private readonly onKick = (channel?: string, message?: string): void => {
    if (channel !== undefined && channel !== this.options.keys.kickChannel()) return;
    const shard = message === undefined || message === '*' ? undefined : this.options.keys.shardOf(message);
    for (let n = 0; n < this.options.keys.shards; n++)
      if (shard === undefined || n === shard) this.kicks[n] = (this.kicks[n] ?? 0) + 1;
    for (const [wakeUp, of] of this.sleepers)
      if (shard === undefined || of === undefined || of === shard) wakeUp();
  };

  constructor(options: RedisTickLoopOptions) {
    this.options = {
      leaseMs: TICK_LEASE_MS,
      maxIdleMs: MAX_IDLE_MS,
      batch: 200,
      errorBackoffMs: 1_000,
      ...options,
    };
    this.scripts = new Scripts(options.redis, options.keys);
  }

  /** How long a claimed tick may run before another replica may take it over. */
  get leaseMs(): number {
    return this.options.leaseMs;
  }

  async start(): Promise<void> {
    const { subscriber, keys } = this.options;
    if (subscriber) {
      await subscriber.subscribe(keys.kickChannel());
      subscriber.on('message', this.onKick);
    }
    for (let shard = 0; shard < keys.shards; shard++) this.loops.push(this.loop(shard));
  }

  /** Schedules a tick no later than `at`; sooner only. */
  async wake(destinationId: string, at: number): Promise<void> {
    if (await this.scripts.wake(destinationId, at)) {
      await this.options.redis.publish(this.options.keys.kickChannel(), destinationId);
    }
  }

  /** Stops claiming; running ticks finish and settle, so no lease is left behind. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.onKick();
    const { subscriber, keys } = this.options;
    if (subscriber) {
      subscriber.off('message', this.onKick);
      await subscriber.unsubscribe(keys.kickChannel()).catch(() => undefined);
    }
    await Promise.all(this.loops);
    await Promise.all(this.running);
    // Those settles rescheduled their destinations without a kick, and this replica's loops
    // no longer look: the others must, now rather than after their longest sleep. Not awaited:
    // a stop during a Redis outage does not wait for it (a later quit still follows it).
    void this.options.redis.publish(this.options.keys.kickChannel(), '*').catch(() => undefined);
  }

  private async loop(shard: number): Promise<void> {
    const { clock, leaseMs, batch, maxIdleMs } = this.options;
    while (!this.stopped) {
      let nextAt: number;
      const kicksBefore = this.kicks[shard] ?? 0;
      // Until this pass decides how long to sleep, a settle sooner than this is remembered.
      this.wakeAt[shard] = clock() + maxIdleMs;
      this.settledAt[shard] = Number.POSITIVE_INFINITY;
      try {
        // The epoch is read beside the claim, in the same round trip (auto-pipelining).
        const [ready, claimed] = await Promise.all([
          this.ready(),
          this.scripts.claimTicks(shard, clock(), leaseMs, batch),
        ]);
        if (!ready) {
          // The state is being rebuilt: what was claimed goes back untouched, due as it was.
          await Promise.all(claimed.ticks.map((t) => this.scripts.settle(t.destinationId, t.lease, t.due)));
          await this.sleep(maxIdleMs);
          continue;
        }
        for (const tick of claimed.ticks) this.run(tick);
        this.tellTakeovers(claimed.ticks);
        if (claimed.ticks.length === batch) continue;
        nextAt = claimed.nextAt;
      } catch (err) {
        this.options.onTickError('*', err);
        nextAt = clock() + this.options.errorBackoffMs;
      }
      // A settle while claiming may have scheduled a tick sooner than the claim saw.
      const settledAt = this.settledAt[shard] ?? Number.POSITIVE_INFINITY;
      const due = nextAt < 0 ? settledAt : Math.min(nextAt, settledAt);
      const now = clock();
      const wait = Number.isFinite(due) ? Math.min(maxIdleMs, Math.max(0, due - now)) : maxIdleMs;
      if (wait <= 0 || (this.kicks[shard] ?? 0) !== kicksBefore) continue;
      this.wakeAt[shard] = now + wait;
      await this.sleep(wait, shard);
    }
  }

  /** Tells `onTakeover` of the claimed ticks that were expired leases; its failure stops nothing. */
  private tellTakeovers(ticks: readonly ClaimedTick[]): void {
    const takenOver = ticks.filter((t) => t.takenOver).map((t) => t.destinationId);
    if (takenOver.length === 0 || !this.options.onTakeover) return;
    try {
      this.options.onTakeover(takenOver);
    } catch (err) {
      this.options.onTickError('*', err);
    }
  }

  /**
   * Runs a tick that this process claimed outside its loops — the API runs the tick it wakes
   * when it is due now (docs/adr/0013) — as the loops run theirs. No loop here looks for its
   * next tick, so its settle kicks the limiters when that is the head of the schedule. Stopped,
   * or `ready` false (read beside the claim): the tick goes back untouched, due as it was.
   */
  runClaimed(claimed: ClaimedTick, ready: boolean): void {
    if (!this.stopped && ready) {
      this.run(claimed, true);
      return;
    }
    const back = this.scripts
      .settleKick(claimed.destinationId, claimed.lease, claimed.due)
      .then(() => undefined)
      .catch((err: unknown) => this.options.onTickError(claimed.destinationId, err));
    this.running.add(back);
    void back.finally(() => this.running.delete(back));
  }

  /** Ticks wait while the state is being rebuilt after a loss of Redis (docs/adr/0002). */
  async ready(): Promise<boolean> {
    try {
      return (await this.options.redis.get(this.options.keys.epoch())) === 'ready';
    } catch {
      return false;
    }
  }

  /** `kick`: settle with `settleKick` (a tick claimed outside this replica's loops). */
  private run(claimed: ClaimedTick, kick = false): void {
    const { tick, clock, onTickError, onTick, errorBackoffMs, leaseMs } = this.options;
    const done = (async () => {
      const startedAt = clock();
      // While the tick runs, its lease is extended every third of its length: a tick that is
      // slow but alive (a claim waiting on Postgres) is not taken for a dead replica's and
      // run again beside itself, which would publish twice for one window. Only a replica
      // that stops for a whole lease (dead, or frozen) loses it.
      let lease = claimed.lease;
      let renewing: Promise<void> = Promise.resolve();
      const renew = setInterval(
        () => {
          renewing = renewing.then(async () => {
            const until = Math.ceil(clock() + leaseMs);
            if (await this.scripts.renewLease(claimed.destinationId, lease, until).catch(() => false))
              lease = String(until);
          });
        },
        Math.max(1, Math.floor(leaseMs / 3)),
      );
      let next: number | null;
      try {
        next = await tick(claimed.destinationId, claimed.due, async () => {
          await renewing;
          return lease;
        });
      } catch (err) {
        onTickError(claimed.destinationId, err);
        next = clock() + errorBackoffMs;
      } finally {
        clearInterval(renew);
      }
      await renewing; // the settle shows the latest token
      const finishedAt = clock();
      try {
        const settled = kick
          ? await this.scripts.settleKick(claimed.destinationId, lease, next)
          : await this.scripts.settle(claimed.destinationId, lease, next);
        // The next tick is due before this replica's loop would look again: look then.
        const shard = this.options.keys.shardOf(claimed.destinationId);
        if (settled.state === 'scheduled' && settled.at < (this.wakeAt[shard] ?? 0))
          this.soonAt(shard, settled.at);
        onTick?.({ destinationId: claimed.destinationId, due: claimed.due, startedAt, finishedAt });
      } catch (err) {
        // The lease expires and another claim runs the tick again.
        onTickError(claimed.destinationId, err);
      }
    })();
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
  }

  /** A tick of `shard` is due at `at`, sooner than its loop means to look. */
  private soonAt(shard: number, at: number): void {
    this.wakeAt[shard] = at;
    const rearm = this.rearm[shard];
    if (rearm) rearm(at);
    else this.settledAt[shard] = Math.min(this.settledAt[shard] ?? Number.POSITIVE_INFINITY, at);
  }

  /** Sleeps `ms`; a kick ends it, and for a shard's loop a sooner settle moves its end. */
  private sleep(ms: number, shard?: number): Promise<void> {
    return new Promise((resolve) => {
      const wakeUp = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wakeUp);
        if (shard !== undefined) this.rearm[shard] = undefined;
        resolve();
      };
      let timer = setTimeout(wakeUp, ms);
      this.sleepers.set(wakeUp, shard);
      if (shard === undefined) return;
      this.rearm[shard] = (at: number): void => {
        clearTimeout(timer);
        timer = setTimeout(wakeUp, Math.max(0, at - this.options.clock()));
      };
    });
  }
}

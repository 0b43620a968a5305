/**
 * The API's view of the delivery side in the distributed shape: after each commit it wakes
 * the destination in the Redis schedule, or announces a changed destination to every
 * process, and it reads the live counters for the stats endpoint. A failed wake is logged,
 * never lost: the rate limiters' sweeper re-wakes every destination with pending work.
 */

import { PERIOD_MS, ratePlan, windowCap } from '@sluice/core';
import {
  type DestinationCache,
  type Dispatcher,
  followDestinationChange,
  type RuntimeStats,
  runtimeStats,
} from '@sluice/engine';
import {
  type ClaimedTick,
  type Keys,
  publishChange,
  type RedisClient,
  type RedisPacing,
  type RedisTickLoop,
  type ScheduleClient,
} from '@sluice/redis';
import { type Destination, StoreUnavailableError } from '@sluice/store';
import type { Logger } from 'pino';
import { wakeInRedis } from './wake.ts';

export interface RedisDispatcherDeps {
  redis: RedisClient;
  keys: Keys;
  schedule: ScheduleClient;
  pacing: RedisPacing;
  destinations: DestinationCache;
  logger: Logger;
  clock: () => number;
  /**
   * Runs the ticks this process wakes when they are due now and none is running, instead of
   * kicking a rate limiter to run them (docs/adr/0013). Absent: wakes only.
   */
  ticks?: RedisTickLoop | undefined;
}

export class RedisDispatcher implements Dispatcher {
  private readonly deps: RedisDispatcherDeps;
  private readonly waking = new Set<Promise<void>>();

  constructor(deps: RedisDispatcherDeps) {
    this.deps = deps;
  }

  wake(destinationId: string): void {
    const { clock, logger, ticks } = this.deps;
    const woken = (
      ticks === undefined
        ? wakeInRedis(this.deps, destinationId, clock())
        : // The epoch is read beside the claim, as a limiter's loop reads it (one round trip).
          Promise.all([ticks.ready(), wakeInRedis(this.deps, destinationId, clock(), ticks.leaseMs)]).then(
            ([ready, claimed]) => {
              if (claimed !== null) ticks.runClaimed(claimed, ready);
              return null;
            },
          )
    )
      .then(() => undefined)
      .catch((err: unknown) => {
        logger.warn({ err, destinationId }, 'wake failed; the sweeper will repair it');
      });
    this.track(woken);
  }

  /**
   * An accept's destinations, woken while its transaction commits: a tick due now with none
   * running is claimed meanwhile, so its round trip hides behind the commit's and the tick
   * runs the moment the commit returns (due from then: its work exists from the commit on).
   * The answer names the destinations the commit gave work (an idempotent replay's included:
   * they run a tick as after any commit) or null (it failed). Each runs the tick it claimed,
   * or is woken as after any commit when it claimed none — a second round trip, needed: a
   * tick running elsewhere, or scheduled sooner than the commit's end, may finish before
   * the commit without seeing its work. Every other claim goes back untouched, due as it
   * was. A claim's lease runs unrenewed until its tick starts, so a commit that has not
   * returned within a third of the lease sends every claim back then (a slow commit holds no
   * destination's ticks) and wakes after it, as does a claim whose reply came that late.
   * Without `ticks`, the wakes follow the commit.
   */
  wakeAhead(destinationIds: Iterable<string>): (woken: ReadonlySet<string> | null) => void {
    const { clock, ticks, logger } = this.deps;
    if (ticks === undefined)
      return (woken) => {
        for (const id of woken ?? []) this.wake(id);
      };
    const claimedAt = clock();
    const freshMs = ticks.leaseMs / 3;
    // One read of the epoch for the accept's claims, in the same round trip as they are.
    const ready = ticks.ready();
    const claims = new Map<string, Promise<[boolean, ClaimedTick | null] | null>>();
    for (const id of destinationIds)
      claims.set(
        id,
        Promise.all([ready, wakeInRedis(this.deps, id, claimedAt, ticks.leaseMs)]).catch(() => null),
      );
    // A claim that will not run now goes back untouched, due as it was.
    const returnClaim = (reply: [boolean, ClaimedTick | null] | null): void => {
      const claimed = reply?.[1] ?? null;
      if (claimed !== null) ticks.runClaimed(claimed, false);
    };
    let answer: (woken: ReadonlySet<string> | null) => void = () => undefined;
    const answered = new Promise<ReadonlySet<string> | null>((resolve) => {
      answer = resolve;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stale = new Promise<'stale'>((resolve) => {
      timer = setTimeout(() => resolve('stale'), freshMs);
      timer.unref();
    });
    // Tracked from now: a shutdown waits for the claims to run or go back.
    const handled = Promise.race([answered, stale])
      .then(async (first) => {
        clearTimeout(timer);
        if (first === 'stale') {
          await Promise.all([...claims.values()].map((claim) => claim.then(returnClaim)));
          for (const id of (await answered) ?? []) this.wake(id);
          return;
        }
        // The commit answered first: the destinations it gave work, or null (it failed).
        const woken = first;
        const committedAt = clock();
        const runs = [...claims].map(([id, claim]) =>
          claim.then((reply) => {
            const work = woken?.has(id) === true;
            const [epochReady, claimed] = reply ?? [false, null];
            // Due from the commit: claimed due now, before the commit, its work exists from then.
            if (claimed !== null && work && clock() - claimedAt < freshMs) {
              ticks.runClaimed({ ...claimed, due: committedAt }, epochReady);
              return;
            }
            returnClaim(reply);
            if (work) this.wake(id);
          }),
        );
        for (const id of woken ?? []) if (!claims.has(id)) this.wake(id);
        await Promise.all(runs);
      })
      .catch((err: unknown) => {
        logger.warn({ err }, 'wake failed; the sweeper will repair it');
      });
    this.track(handled);
    return answer;
  }

  private track(work: Promise<void>): void {
    this.waking.add(work);
    void work.finally(() => this.waking.delete(work));
  }

  /** The wakes in flight are done (their claimed ticks handed to `ticks`, which stop awaits). */
  async settled(): Promise<void> {
    while (this.waking.size > 0) await Promise.all(this.waking);
  }

  /**
   * A new destination: every process, this one included, reads it now through the change
   * feed, before its first event. Nothing to wake: it has no work yet.
   */
  async destinationCreated(destinationId: string): Promise<void> {
    const { redis, keys, logger } = this.deps;
    try {
      await publishChange(redis, keys, destinationId);
    } catch (err) {
      logger.warn(
        { err, destinationId },
        'could not announce a new destination; each process reads it on first use',
      );
    }
  }

  checkAnnounce(): void {
    if (this.deps.redis.status !== 'ready') throw new StoreUnavailableError('redis is not connected');
  }

  /**
   * After the commit, before the answer: the committed cap goes where every request's start
   * checks it (a lowered limit holds from the answer on, even for a worker whose copy has not
   * heard of it yet), every process refreshes its copy, and the destination ticks. A lowered
   * limit's answer also waits for the requests that started under the old limit to arrive, so
   * every window that begins after the answer holds the new limit (ADR 0012).
   */
  async destinationChanged(destinationId: string): Promise<void> {
    const { redis, keys, destinations, schedule, pacing, clock, logger } = this.deps;
    await followDestinationChange(destinationId, {
      destinations,
      logger,
      clock,
      schedule,
      publish: async (id, destination) => {
        const cap = destination === undefined ? null : windowCap(ratePlan(destination.rateLimit));
        await pacing.storeCap(id, cap, destination?.updatedAt ?? clock());
        await publishChange(redis, keys, id);
      },
      mayStillArrive: (id) => pacing.startedMayStillArrive(id, clock),
      arrivalBoundMs: pacing.options.arrivalBoundMs,
    });
  }

  destination(destinationId: string): Promise<Destination | undefined> {
    return this.deps.destinations.get(destinationId);
  }

  async runtimeStats(destinationId: string): Promise<RuntimeStats> {
    const destination = await this.deps.destinations.get(destinationId);
    const periodMs = PERIOD_MS[destination?.rateLimit.period ?? 'second'];
    const now = this.deps.clock();
    return runtimeStats(destination, await this.deps.pacing.read(destinationId, periodMs, now), now);
  }
}

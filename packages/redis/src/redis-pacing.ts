/**
 * The distributed pace state (docs/adr/0002): the same numbers as the single box's
 * MemoryPacing, kept in per-destination Redis sorted sets whose entries expire by their
 * scores, so a crashed worker or a lost publish leaves nothing that drifts.
 */

import { randomBytes } from 'node:crypto';
import {
  ADAPTIVE,
  type AdaptiveFeedback,
  emissionMs,
  LATENCY_ALPHA,
  type RatePlan,
  tatFromArrivals,
  windowCap,
} from '@sluice/core';
import {
  type AttemptPace,
  type AttemptPacing,
  LeaseLostError,
  type PaceCounts,
  type PublishedPlan,
  type PublishOptions,
  type TickPacing,
} from '@sluice/engine';
import { perTurn } from '@sluice/store';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';
import { defineScripts, perShard, SCRIPT_BATCH } from './scripts.ts';

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

/**
 * How long a committed change's cap is kept for the starts (`storeCap`): far longer than any
 * process takes to hear of the change, after which their copies carry it.
 */
const STORED_CAP_MS = 10 * 60_000;

/**
 * How long a published delivery's entry in `queued` counts when its request never starts: a
 * backstop, not a lease. A job may wait in the delivery queue far longer than the claim lease
 * (`SLUICE_LEASE_MS`) when the workers are behind, and the sweeper leaves a claim whose job is
 * still queued alone, so the entry must outlive any such wait. The entries nothing will start
 * (a lost publish, a tick that died before publishing) the sweeper forgets as it returns
 * their deliveries to pending (`forget`); this expiry catches whatever it missed.
 */
const QUEUED_EXPIRY_MS = 60 * 60_000;

type Field = string | null;
/** paceRead's reply: queued, inFlight, sentInWindow, tat, lim, per, E, hold, leaving, lat, bsy, fin. */
type PaceReply = [number, number, number, Field, Field, Field, Field, Field, number[], Field, Field, Field];

interface ReadCall {
  destinationId: string;
  periodMs: number;
  now: number;
  horizon: number;
}

/** A tick's count of what it publishes: its destination and its part of paceRoomBatch's ARGV. */
interface CountCall {
  destinationId: string;
  args: (string | number)[];
}

export interface RedisPacingOptions {
  redis: RedisClient;
  keys: Keys;
  /** Added to each send's occupancy of the window (clock rounding). */
  windowMarginMs: number;
  /** Longest time assumed between a request's write and its arrival. */
  arrivalBoundMs: number;
  /**
   * A published delivery whose request has not started after this no longer counts; default
   * QUEUED_EXPIRY_MS (tests shorten it).
   */
  queuedExpiryMs?: number | undefined;
  /**
   * How long a request's `inflight` entry lasts unless this process renews it (it does, every
   * third of it, while the request lasts): a process that dies leaves entries that stop
   * counting against the destination's concurrency and fair bound within this, as its jobs
   * come back within BullMQ's lock (`SLUICE_JOB_LOCK_MS`). Absent: the request's timeout.
   */
  inFlightLeaseMs?: number | undefined;
  /** Runs `fn` after `ms` unless cancelled; default `setTimeout` (tests on a fake clock: at once). */
  later?: ((fn: () => void, ms: number) => () => void) | undefined;
}

function later(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

export class RedisPacing implements TickPacing, AttemptPacing {
  /** Also what a wake needs to find when the window has room (`Scripts.wakeForWork`). */
  readonly options: RedisPacingOptions;
  readonly windowMarginMs: number;
  /** How long a published delivery's `queued` entry counts (QUEUED_EXPIRY_MS). */
  readonly queuedExpiryMs: number;
  /**
   * A request's entry in the window is `<delivery>:<this process>.<count>`: unique across
   * processes and repeats of one delivery, without asking the CSPRNG for every request (a
   * per-request `randomBytes` showed in a worker's profile).
   */
  private readonly nonce = randomBytes(6).toString('hex');
  private sent = 0;
  /** This process's requests in flight, by token: their `inflight` key and their deadline. */
  private readonly live = new Map<string, { key: string; deadline: number }>();
  private renewing: ReturnType<typeof setInterval> | undefined;

  /** The reads of one turn (the ticks a claim started together), one script call per shard. */
  private readonly reads = perTurn<ReadCall, PaceReply>((calls) => this.readBatch(calls), SCRIPT_BATCH);
  /** Their counts of what they publish, likewise. */
  private readonly counts = perTurn<CountCall, string>((calls) => this.countBatch(calls), SCRIPT_BATCH);

  constructor(options: RedisPacingOptions) {
    defineScripts(options.redis);
    this.options = options;
    this.windowMarginMs = options.windowMarginMs;
    this.queuedExpiryMs = options.queuedExpiryMs ?? QUEUED_EXPIRY_MS;
  }

  private script(name: string): ScriptFn {
    const fn = (this.options.redis as unknown as Record<string, ScriptFn>)[name] as ScriptFn;
    return (...args) => fn.apply(this.options.redis, args);
  }

  async read(destinationId: string, periodMs: number, now: number, horizon = now): Promise<PaceCounts> {
    const reply = await this.reads.load({ destinationId, periodMs, now, horizon });
    const [queued, inFlight, sentInWindow, tat, lim, per, effective, hold, leaving, lat, busy, fin] = reply;
    const adaptive =
      lim && per && effective
        ? {
            limit: Number(lim),
            periodMs: Number(per),
            effective: Number(effective),
            holdUntil: Number(hold ?? 0),
          }
        : null;
    return {
      queued,
      inFlight,
      sentInWindow,
      leaving,
      latencyMs: lat ? Number(lat) : null,
      inFlightSince: inFlight > 0 && busy ? Number(busy) : null,
      answeredAt: fin ? Number(fin) : null,
      bucketTat: Number(tat ?? 0),
      adaptive,
    };
  }

  async published(
    destinationId: string,
    deliveryIds: readonly string[],
    plan: PublishedPlan,
    now: number,
    { room = 1, fence, startsAt = now }: PublishOptions = {},
  ): Promise<number> {
    const roomAt = Number(
      await this.counts.load({
        destinationId,
        args: [
          Math.floor(now),
          // roomAt answers when at most cap - 1 count: room for `room` is that of a smaller cap.
          windowCap(plan) - Math.max(1, room) + 1,
          plan.periodMs,
          plan.burst === null ? 0 : emissionMs(plan),
          destinationId,
          fence ?? '',
          Math.max(Math.floor(now), Math.ceil(startsAt)),
          deliveryIds.length,
          ...deliveryIds,
        ],
      }),
    );
    if (roomAt === -1) throw new LeaseLostError(destinationId);
    return roomAt;
  }

  /** One paceReadBatch call per shard for the reads of a turn (the ticks run side by side). */
  private readBatch(calls: readonly ReadCall[]): Promise<PaceReply[]> {
    const { keys, windowMarginMs } = this.options;
    return perShard(keys, calls, async (_shard, group) => {
      const ids = group.map((c) => c.destinationId);
      return (await this.script('paceReadBatch')(
        4 * ids.length,
        ...ids.flatMap((id) => [keys.queued(id), keys.inflight(id), keys.sends(id), keys.pace(id)]),
        windowMarginMs,
        this.queuedExpiryMs,
        ...group.flatMap((c) => [Math.floor(c.now), c.periodMs, Math.floor(c.horizon)]),
      )) as PaceReply[];
    });
  }

  /** One paceRoomBatch call per shard for the counts of a turn; each is fenced on its own. */
  private countBatch(calls: readonly CountCall[]): Promise<string[]> {
    const { keys, windowMarginMs } = this.options;
    return perShard(keys, calls, async (shard, group) => {
      const ids = group.map((c) => c.destinationId);
      const leases = keys.leases(shard);
      const replies = (await this.script('paceRoomBatch')(
        4 * ids.length,
        ...ids.flatMap((id) => [keys.queued(id), keys.sends(id), keys.pace(id), leases]),
        windowMarginMs,
        this.queuedExpiryMs,
        ...group.flatMap((c) => c.args),
      )) as (string | number)[];
      return replies.map(String);
    });
  }

  noteRoom(): void {}

  async start(
    destinationId: string,
    deliveryId: string,
    periodMs: number,
    timeoutMs: number,
    now: number,
    cap?: number,
  ): Promise<AttemptPace | null> {
    const { redis, keys, arrivalBoundMs } = this.options;
    const token = `${deliveryId}:${this.nonce}.${(this.sent++).toString(36)}`;
    const sends = keys.sends(destinationId);
    const pace = keys.pace(destinationId);
    const inflight = keys.inflight(destinationId);
    const deadline = Math.ceil(now + timeoutMs);
    const lease = this.options.inFlightLeaseMs;
    const reply = (await this.script('paceStart')(
      keys.queued(destinationId),
      inflight,
      sends,
      pace,
      keys.cap(destinationId),
      keys.built(keys.shardOf(destinationId)),
      deliveryId,
      token,
      deadline,
      now,
      cap ?? 0,
      periodMs + this.windowMarginMs,
      lease === undefined ? deadline : Math.min(deadline, Math.ceil(now + lease)),
    )) as number | [number, number];
    // -2: no room under the cap; -3: the shard's state is being rebuilt after a loss of Redis.
    if (!Array.isArray(reply)) return null;
    if (lease !== undefined && timeoutMs > lease) this.hold(token, inflight, deadline, lease, now);
    const index = Number(reply[0]);
    // The write time lowers the send's occupancy to `written + arrivalBound` only when the
    // response is not in by then (before it, the response is the tighter bound and lowers it
    // itself). So it is sent only then: a fast receiver costs no round trip for it, and a
    // slow one's entry is lowered at the moment the lower bound starts to matter.
    // The response's call passes the sooner of the two bounds too, not the response alone:
    // a tick's read may have dropped the lowered entry (it could no longer count) before a
    // slow response, and `ZADD LT` then adds it again at what it is given. At the write's
    // bound it is out of the window again at once, as in SendWindow; at the response's it
    // was counted for another period (and the bucket from then). The add is kept on
    // purpose: after a loss of Redis it puts back a request that was in flight across the
    // loss at its true bound (the rebuild counts it as sent only at the rebuild).
    let cancel: (() => void) | undefined;
    let arrivedBy = Number.POSITIVE_INFINITY;
    return {
      startedBefore: Number(reply[1]) === 0,
      written: (at) => {
        arrivedBy = Math.ceil(at + arrivalBoundMs);
        cancel = (this.options.later ?? later)(
          () => void redis.zadd(sends, 'LT', arrivedBy, token).catch(() => undefined),
          arrivalBoundMs,
        );
      },
      finished: async (at, feedback) => {
        cancel?.();
        this.live.delete(token);
        await this.script('paceFinish')(
          keys.inflight(destinationId),
          sends,
          pace,
          token,
          // As SendWindow: the response or the write's bound, whichever is sooner.
          Math.min(Math.ceil(at), arrivedBy),
          index,
          Math.round(at - now),
          LATENCY_ALPHA,
          Math.ceil(at),
          ...feedbackArgs(feedback),
        );
      },
    };
  }

  /** Stops renewing this process's entries (its requests are over, or it is going away). */
  close(): void {
    clearInterval(this.renewing);
    this.renewing = undefined;
    this.live.clear();
  }

  /**
   * Keeps a request's `inflight` entry while it lasts: every third of the lease, each of this
   * process's live entries is moved to now + lease, never past its deadline (`GT`: only ever
   * later), in one pipelined write per shard. A renewal also puts back an entry a tick's read dropped
   * (this process stalled past the lease, a slow Redis): the request still runs, so it must
   * count. None brings back a finished request: `finished` takes the token out of `live`
   * before it sends `paceFinish`, on the same connection, so every renewal that carried it
   * reaches Redis first. A start whose reply came late (`startedAt` more than a third of the
   * lease ago) is renewed at once. Entries past their deadline are dropped (their request has
   * been aborted; a `finished` never called, at shutdown).
   */
  private hold(token: string, key: string, deadline: number, lease: number, startedAt: number): void {
    this.live.set(token, { key, deadline });
    if (Date.now() - startedAt > lease / 3) this.renew([[token, { key, deadline }]], lease);
    if (this.renewing) return;
    this.renewing = setInterval(() => {
      const now = Date.now();
      for (const [t, { deadline: d }] of this.live) if (d <= now) this.live.delete(t);
      if (this.live.size === 0) {
        clearInterval(this.renewing);
        this.renewing = undefined;
        return;
      }
      this.renew(this.live, lease);
    }, lease / 3);
    this.renewing.unref();
  }

  /** One pipeline per shard: on a Redis Cluster a pipeline's keys must share a node. */
  private renew(entries: Iterable<[string, { key: string; deadline: number }]>, lease: number): void {
    const until = Date.now() + lease;
    const pipelines = new Map<string, ReturnType<RedisClient['pipeline']>>();
    for (const [t, { key, deadline }] of entries) {
      const tag = /\{[^}]*\}/.exec(key)?.[0] ?? '';
      let pipeline = pipelines.get(tag);
      if (!pipeline) {
        pipeline = this.options.redis.pipeline();
        pipelines.set(tag, pipeline);
      }
      pipeline.zadd(key, 'GT', Math.min(deadline, until), t);
    }
    for (const pipeline of pipelines.values()) void pipeline.exec().catch(() => undefined);
  }

  /**
   * After a loss of Redis: requests that may have been sent (an attempt recorded, or a
   * delivery claimed but not recorded) count against the window again, each as arrived at
   * `arrivedBy` (ms) — and against a burst allowance's bucket, when `bucket` (its plan) is
   * given (docs/adr/0008).
   */
  async restoreSends(
    destinationId: string,
    arrivedBy: readonly number[],
    bucket?: Pick<RatePlan, 'limit' | 'periodMs'>,
  ): Promise<void> {
    if (arrivedBy.length === 0) return;
    const { redis, keys } = this.options;
    const members = arrivedBy.flatMap((t, i) => [
      Math.ceil(t),
      `restored:${i}:${randomBytes(4).toString('hex')}`,
    ]);
    const multi = redis.multi().zadd(keys.sends(destinationId), ...members);
    if (bucket) {
      const pace = keys.pace(destinationId);
      multi.hset(pace, 'tat', tatFromArrivals(bucket, arrivedBy), 'T', emissionMs(bucket), 'n', 0);
      multi.pexpire(pace, 86_400_000);
    }
    await multi.exec();
  }

  async startedBefore(destinationId: string, deliveryId: string): Promise<boolean> {
    return (await this.options.redis.zscore(this.options.keys.queued(destinationId), deliveryId)) === null;
  }

  async drop(destinationId: string, deliveryId: string): Promise<void> {
    await this.options.redis.zrem(this.options.keys.queued(destinationId), deliveryId);
  }

  /**
   * The API committed a change of the destination: from now on every start
   * checks the window against `cap` too, as well as against its caller's copy of the limit
   * (`start`), until the copies have heard of the change (`storeCap-1.lua`). `cap` null: the
   * destination is gone. `version`: the committed copy's `updatedAt`.
   */
  async storeCap(destinationId: string, cap: number | null, version: number): Promise<void> {
    await this.script('storeCap')(this.options.keys.cap(destinationId), cap ?? 0, version, STORED_CAP_MS);
  }

  /**
   * Whether a request of the destination that had started when this was made may still
   * arrive: its send's entry still there and scored (the latest moment it can arrive) after
   * the clock — no response yet, and its write plus the arrival bound not passed (a worker
   * that died mid-request leaves its entry until the timeout). A lowered limit's answer waits
   * while it says so (`untilOldLimitArrived`, ADR 0012). Each call after the first looks only
   * at the requests the one before found still on their way.
   */
  startedMayStillArrive(destinationId: string, clock: () => number): () => Promise<boolean> {
    const { redis, keys } = this.options;
    const sends = keys.sends(destinationId);
    let pending: string[] | undefined;
    return async () => {
      if (pending === undefined) pending = await redis.zrangebyscore(sends, `(${clock()}`, '+inf');
      else if (pending.length > 0) {
        const scores = await redis.zmscore(sends, ...pending);
        const now = clock();
        pending = pending.filter((_, i) => {
          const score = scores[i];
          return score !== null && score !== undefined && Number(score) > now;
        });
      }
      return pending.length > 0;
    };
  }

  /**
   * The sweeper returned these deliveries of a destination to pending: they no longer count
   * as queued, unless a tick counted one again since (an entry published at or after
   * `publishedBefore`, the sweep's cutoff). Returns how many entries went.
   */
  async forget(destinationId: string, deliveryIds: string[], publishedBefore: number): Promise<number> {
    if (deliveryIds.length === 0) return 0;
    const cutoff = Math.min(publishedBefore, Number.MAX_SAFE_INTEGER);
    return Number(
      await this.script('paceForget')(this.options.keys.queued(destinationId), cutoff, ...deliveryIds),
    );
  }
}

/** paceFinish's ARGV[7..]: the outcome and adaptive pacing's parameters, or only 0. */
function feedbackArgs(f: AdaptiveFeedback | null | undefined): (string | number)[] {
  if (!f) return [0];
  const p = ADAPTIVE;
  return [
    1,
    f.at,
    f.limit,
    f.periodMs,
    f.status ?? -1,
    f.retryAfterMs ?? -1,
    f.latencyMs,
    p.decrease,
    p.increase,
    p.ewmaAlpha,
    p.baselineDrift,
    p.latencyFactor,
    p.latencyFloorMs,
    p.maxHoldMs,
  ];
}

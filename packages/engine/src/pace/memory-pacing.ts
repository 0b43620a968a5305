/**
 * The single box's pacing, in memory and exact: per destination, the send window and the
 * counters of the tick arithmetic (`Pacer`, `DestinationPace`), read and recorded through
 * the pace ports of `pacing.ts` (`MemoryPacing`). The distributed shape keeps the same
 * numbers in Redis.
 *
 * - queued: published to the delivery queue, request not yet started (`stillInQueue`);
 * - inFlight: request started, response not yet in;
 * - window: every request that still counts against the trailing window.
 *
 * Counters may over-count (that only slows a destination), never under-count: `queued` is
 * raised before publishing, moved to `inFlight` when the request starts.
 */

import {
  type AdaptiveState,
  adapt,
  type BucketState,
  bucketFinish,
  bucketRoomAt,
  bucketStart,
  emissionMs,
  emptyBucket,
  nextLatency,
  type RatePlan,
  SendWindow,
  windowCap,
} from '@sluice/core';
import type {
  AttemptPace,
  AttemptPacing,
  PaceCounts,
  PublishedPlan,
  PublishOptions,
  TickPacing,
} from './pacing.ts';

/** A backed-off destination quiet this long forgets its adaptive state (the Redis hash's expiry). */
const ADAPTIVE_FORGET_MS = 86_400_000;

export interface PacerOptions {
  marginMs: number;
  arrivalBoundMs: number;
}

export class DestinationPace {
  readonly window: SendWindow;
  queued = 0;
  inFlight = 0;
  /** The last tick was allowed more than was due: new work may go out before the next tick. */
  roomForMore = true;
  /** The burst allowance's token bucket (docs/adr/0008). */
  readonly bucket: BucketState = emptyBucket();
  /** Adaptive pacing's state; null until an outcome of an adaptive destination. */
  adaptive: AdaptiveState | null = null;
  /** The moving average of its requests' latency (ms); null until one is over. */
  latencyMs: number | null = null;
  /** When its last request finished (ms); null: none yet. */
  answeredAt: number | null = null;
  /** When its requests in flight last went from none to one (the fair bound's stall clock). */
  busySince = 0;

  constructor(periodMs: number, options: PacerOptions) {
    this.window = new SendWindow({ periodMs, ...options });
  }

  setPeriod(periodMs: number): void {
    this.window.options.periodMs = periodMs;
  }

  /**
   * The earliest moment a tick could publish one more: the window (its cap is the burst, if
   * any), the bucket of a burst allowance and an adaptive hold all have room. A hint.
   */
  roomAt(now: number, plan: Pick<RatePlan, 'limit' | 'periodMs' | 'burst'>, holdUntil = 0): number {
    const cap = windowCap(plan);
    const held = Math.max(now, holdUntil);
    const bucket = bucketRoomAt(plan, this.bucket.tat, this.queued, now, this.window.options.marginMs);
    if (this.window.surelyRoom(now, cap, this.queued)) return Math.max(held, bucket);
    return Math.max(this.window.roomAt(now, cap - 1, this.queued), held, bucket);
  }

  /**
   * Nothing queued, in flight or in the window; a full bucket; not backing off — or backed off
   * but quiet for a day (as the Redis pace hash expires: adaptive pacing starts again at the limit).
   */
  idle(now: number): boolean {
    const a = this.adaptive;
    return (
      this.queued === 0 &&
      this.inFlight === 0 &&
      this.window.count(now) === 0 &&
      this.bucket.tat <= now &&
      (a === null ||
        (a.effective >= a.limit && a.holdUntil <= now) ||
        (now - a.calmSince > ADAPTIVE_FORGET_MS && a.holdUntil <= now))
    );
  }
}

export class Pacer {
  private readonly paces = new Map<string, DestinationPace>();
  readonly options: PacerOptions;

  constructor(options: PacerOptions) {
    this.options = options;
  }

  of(destinationId: string, periodMs: number): DestinationPace {
    let pace = this.paces.get(destinationId);
    if (pace === undefined) {
      pace = new DestinationPace(periodMs, this.options);
      this.paces.set(destinationId, pace);
    } else {
      pace.setPeriod(periodMs);
    }
    return pace;
  }

  peek(destinationId: string): DestinationPace | undefined {
    return this.paces.get(destinationId);
  }

  /** Forgets destinations with nothing queued, in flight or in their window. */
  collect(now: number, keep: (destinationId: string) => boolean): void {
    for (const [id, pace] of this.paces) if (!keep(id) && pace.idle(now)) this.paces.delete(id);
  }

  totals(): { queued: number; inFlight: number } {
    let queued = 0;
    let inFlight = 0;
    for (const pace of this.paces.values()) {
      queued += pace.queued;
      inFlight += pace.inFlight;
    }
    return { queued, inFlight };
  }
}

/** The single box's pace state: in memory, exact. */
export class MemoryPacing implements TickPacing, AttemptPacing {
  readonly pacer: Pacer;
  readonly windowMarginMs: number;

  constructor(pacer: Pacer) {
    this.pacer = pacer;
    this.windowMarginMs = pacer.options.marginMs;
  }

  async read(destinationId: string, periodMs: number, now: number, horizon = now): Promise<PaceCounts> {
    const pace = this.pacer.of(destinationId, periodMs);
    return {
      queued: pace.queued,
      inFlight: pace.inFlight,
      sentInWindow: pace.window.count(now),
      latencyMs: pace.latencyMs,
      inFlightSince: pace.inFlight > 0 ? pace.busySince : null,
      answeredAt: pace.answeredAt,
      leaving: horizon > now ? pace.window.leaving(now, horizon) : [],
      bucketTat: pace.bucket.tat,
      adaptive: pace.adaptive,
    };
  }

  async published(
    destinationId: string,
    deliveryIds: readonly string[],
    plan: PublishedPlan,
    now: number,
    { room = 1, startsAt = now }: PublishOptions = {},
  ): Promise<number> {
    const pace = this.pacer.of(destinationId, plan.periodMs);
    pace.queued += deliveryIds.length;
    pace.bucket.emissionMs = plan.burst === null ? 0 : emissionMs(plan);
    const cap = windowCap(plan) - Math.max(1, room);
    return pace.window.roomAt(now, cap, pace.queued, Math.max(now, startsAt));
  }

  noteRoom(destinationId: string, roomForMore: boolean): void {
    const pace = this.pacer.peek(destinationId);
    if (pace) pace.roomForMore = roomForMore;
  }

  async start(
    destinationId: string,
    _deliveryId: string,
    periodMs: number,
    _timeoutMs: number,
    now: number,
    cap?: number,
  ): Promise<AttemptPace | null> {
    const pace: DestinationPace = this.pacer.of(destinationId, periodMs);
    // The scan only when the window may be full: a start is once per request.
    if (cap !== undefined && !pace.window.surelyRoom(now, cap, 0) && pace.window.count(now) >= cap)
      return null;
    pace.queued--;
    if (pace.inFlight++ === 0) pace.busySince = now;
    const handle = pace.window.start(now);
    const index = bucketStart(pace.bucket, now);
    return {
      written: (at) => pace.window.written(handle, at),
      finished: async (at, feedback) => {
        pace.window.finish(handle, at);
        pace.inFlight--;
        pace.latencyMs = nextLatency(pace.latencyMs, at - now);
        pace.answeredAt = Math.max(pace.answeredAt ?? at, at);
        const { periodMs: p, marginMs } = pace.window.options;
        bucketFinish(pace.bucket, index, pace.window.occupiedUntil(handle) - p - marginMs);
        if (feedback) pace.adaptive = adapt(pace.adaptive, feedback);
      },
    };
  }

  async drop(destinationId: string): Promise<void> {
    const pace = this.pacer.peek(destinationId);
    if (pace) pace.queued--;
  }
}

/**
 * What the tick and the workers need to know and record about each destination's pace
 * (docs/design.md "The tick arithmetic"), declared here by the code that uses it. The single box
 * keeps it in memory (`memory-pacing.ts`); the distributed shape in Redis (`RedisPacing`).
 *
 * - queued: published to the delivery queue, request not yet started (`stillInQueue`);
 * - inFlight: request started, response not yet in;
 * - sentInWindow: requests that still count against the trailing window.
 *
 * - latencyMs, inFlightSince, answeredAt: what the fair bound is made from (`@sluice/core` fair.ts);
 * - bucketTat: the token bucket of a burst allowance (`@sluice/core` bucket.ts);
 * - adaptive: the adaptive pacing state, fed by the workers' outcomes (docs/adr/0008).
 *
 * Implementations may over-count (that only slows a destination), never under-count.
 */

import type { AdaptiveFeedback, AdaptiveState, RatePlan } from '@sluice/core';

export interface PaceCounts {
  queued: number;
  inFlight: number;
  sentInWindow: number;
  /**
   * When each send counted in `sentInWindow` stops counting, ascending, of those that stop
   * by the horizon `read` was given (none without one): what a tick held back by its window
   * may publish ahead of (core tick.ts `publishAhead`).
   */
  leaving: number[];
  /** The moving average of its answered requests' latency (ms); null: none answered (or forgotten). */
  latencyMs: number | null;
  /**
   * Since when it has had requests in flight without a break (ms): when they last went from
   * none to one; null: none in flight. With its last answer, how long it has gone without
   * answering while busy (the fair bound's stall, core fair.ts).
   */
  inFlightSince: number | null;
  /** When its last request finished (ms); null: none (or forgotten). */
  answeredAt: number | null;
  /** The bucket's theoretical arrival time (ms; 0 when never used). */
  bucketTat: number;
  /** Adaptive pacing's state; null when it has seen no outcome (or was lost with Redis). */
  adaptive: Pick<AdaptiveState, 'limit' | 'periodMs' | 'effective' | 'holdUntil'> | null;
}

/** The plan a tick published under, as the pace state records it. */
export type PublishedPlan = Pick<RatePlan, 'limit' | 'periodMs' | 'burst'>;

export interface PublishOptions {
  /** Free slots the room hint waits for (default one). */
  room?: number | undefined;
  /**
   * Where ticks hold leases (the distributed schedule): the tick's lease token. A tick whose
   * lease is no longer its own counts nothing and gets `LeaseLostError`: it must not publish
   * (its successor may already have read the counts without it).
   */
  fence?: string | undefined;
  /** The published requests start no sooner than this (published ahead; default now). */
  startsAt?: number | undefined;
}

/** The rate limiter's side. */
export interface TickPacing {
  /** Clock rounding kept by the window and the bucket (ms). */
  readonly windowMarginMs: number;
  /** `horizon`: list the sends that stop counting by then (`PaceCounts.leaving`). */
  read(destinationId: string, periodMs: number, now: number, horizon?: number): Promise<PaceCounts>;
  /**
   * Records deliveries as published, before they are handed to the delivery queue (none: a
   * tick that publishes nothing), and returns the earliest moment the window may then have
   * room for `room` more (a scheduling hint: requests in flight are assumed to finish by
   * `startsAt`, queued ones to start then). One step, so one round trip where the state is
   * remote. With a burst it also records the bucket's emission interval (the requests'
   * starts take tokens).
   */
  published(
    destinationId: string,
    deliveryIds: readonly string[],
    plan: PublishedPlan,
    now: number,
    options?: PublishOptions,
  ): Promise<number>;
  /** The tick was allowed more than was due (new work may go out before the next tick). */
  noteRoom(destinationId: string, roomForMore: boolean): void;
}

/** A tick stalled past its lease and another took its destination over: it publishes nothing. */
export class LeaseLostError extends Error {
  constructor(destinationId: string) {
    super(`the tick of ${destinationId} lost its lease before it counted its deliveries`);
    this.name = 'LeaseLostError';
  }
}

/** One request's record in the pace state. */
export interface AttemptPace {
  /**
   * Where the pace is shared (Redis): this delivery was no longer counted queued, so a request
   * of the same claim started before — its job runs again after its worker died.
   */
  startedBefore?: boolean;
  /** The request is on the socket. */
  written(at: number): void;
  /**
   * The response arrived, or the request failed (its time, from the start, feeds the
   * destination's latency); with adaptive pacing, what it says about the
   * receiver (fed to `adapt` in the same step: one round trip where the state is remote).
   */
  finished(at: number, feedback?: AdaptiveFeedback | null): Promise<void>;
}

/** The workers' side. */
export interface AttemptPacing {
  /**
   * A published delivery's request starts: from queued to in flight and into the window.
   * With `cap` (the limit in force now: the burst, else the limit), only while fewer than
   * `cap` sends count against the window; else nothing changes and the answer is null. A
   * tick counts the window when it publishes, but a delivery published ahead of its slot, or
   * one that waited in a queue, starts later, and the limit may have been lowered meanwhile
   * (docs/design.md I2, I5). Without `cap` it is refused only while a pace state that was
   * lost is being rebuilt (the distributed shape after a loss of Redis: its window would not
   * count what was sent before the loss).
   */
  start(
    destinationId: string,
    deliveryId: string,
    periodMs: number,
    timeoutMs: number,
    now: number,
    cap?: number,
  ): Promise<AttemptPace | null>;
  /** A published delivery will not be sent (its destination is gone). */
  drop(destinationId: string, deliveryId: string): Promise<void>;
  /**
   * Where the pace is shared (Redis): whether a request of this claimed delivery started
   * before (it is no longer counted queued). Asked of a job run again after its worker died
   * whose start was refused: the claim it releases then counts as an attempt.
   */
  startedBefore?(destinationId: string, deliveryId: string): Promise<boolean>;
}

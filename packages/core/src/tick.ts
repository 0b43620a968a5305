/**
 * The tick decision (DESIGN "The tick arithmetic"): how many deliveries one tick may
 * publish for a destination, and when its next tick is due.
 *
 *   allow = min(perRun − stillInQueue,
 *               limit − sentInWindow − stillInQueue,
 *               maxConcurrency − inFlight − stillInQueue)
 *
 * - stillInQueue: published to the delivery queue, request not yet started;
 * - sentInWindow: requests that still count against the trailing window (SendWindow);
 * - inFlight: requests started and not finished.
 *
 * The per-run term paces a backlog over the interval; the window term makes the limit
 * hold in every sliding window even when a tick runs early (a wake); the concurrency term
 * counts queued deliveries too, since each of them is about to be in flight.
 */

import type { RatePlan } from './rate-plan.ts';

export interface TickInput {
  plan: RatePlan;
  stillInQueue: number;
  sentInWindow: number;
  inFlight: number;
  maxConcurrency: number | null;
}

export type TickLimit = 'run' | 'window' | 'concurrency';

export interface TickDecision {
  /** How many deliveries to publish now; 0 is a short circuit. */
  allow: number;
  /** Which term bound `allow`. */
  limitedBy: TickLimit;
}

export function decideTick({
  plan,
  stillInQueue,
  sentInWindow,
  inFlight,
  maxConcurrency,
}: TickInput): TickDecision {
  const run = plan.perRun - stillInQueue;
  const window = plan.limit - sentInWindow - stillInQueue;
  const concurrency =
    maxConcurrency === null ? Number.POSITIVE_INFINITY : maxConcurrency - inFlight - stillInQueue;
  let allow = run;
  let limitedBy: TickLimit = 'run';
  if (window < allow) {
    allow = window;
    limitedBy = 'window';
  }
  if (concurrency < allow) {
    allow = concurrency;
    limitedBy = 'concurrency';
  }
  return { allow: Math.max(0, allow), limitedBy };
}

/**
 * The least time between two ticks of one destination held back by its window: a backlog
 * then follows the window out in small batches instead of one tick per freed slot.
 */
export const MIN_TICK_GAP_MS = 10;

/**
 * The due time of the next tick of a destination that still has work.
 *
 * - After a full run (or a concurrency cap): one interval after the tick that just ran
 *   (`due` is when it was due, so time spent running does not drift the schedule), and not
 *   before the window has room again.
 * - When the window held the tick back: as soon as the window has room (DESIGN: "when the
 *   window is full, the next tick is due when the oldest send leaves it"), at least
 *   MIN_TICK_GAP_MS later. Waiting a whole interval here would halve a per-second rate.
 */
export function nextTickAt(
  due: number,
  now: number,
  plan: RatePlan,
  windowRoomAt: number,
  limitedBy: TickLimit,
): number {
  if (limitedBy === 'window') return Math.max(windowRoomAt, now + MIN_TICK_GAP_MS);
  return Math.max(due + plan.intervalMs, windowRoomAt, now);
}

/**
 * The tick decision (docs/design.md "The tick arithmetic"): how many deliveries one tick may
 * publish for a destination, and when its next tick is due.
 *
 *   allow = min(perRun − stillInQueue,
 *               limit − sentInWindow − stillInQueue,
 *               maxConcurrency − inFlight − stillInQueue,
 *               fairBound − inFlight − stillInQueue)
 *
 * - stillInQueue: published to the delivery queue, request not yet started;
 * - sentInWindow: requests that still count against the trailing window (SendWindow);
 * - inFlight: requests started and not finished.
 *
 * The per-run term paces a backlog over the interval; the window term makes the limit
 * hold in every sliding window even when a tick runs early (a wake); the concurrency term
 * counts queued deliveries too, since each of them is about to be in flight. The fair bound
 * (`fair.ts`, docs/adr/0014) is a concurrency term the service sets from the destination's
 * rate and observed latency; `maxConcurrency` is the user's.
 *
 * With a burst allowance (docs/adr/0008) the window's cap is the burst, and a fourth term,
 * `bucketTokens − stillInQueue` (bucket.ts), keeps the long-run rate at the limit. With
 * adaptive pacing the plan is made from the effective limit, and a destination held by a
 * Retry-After (`held`) sends nothing.
 */

import { type RatePlan, windowCap } from './rate-plan.ts';

export interface TickInput {
  plan: RatePlan;
  stillInQueue: number;
  sentInWindow: number;
  inFlight: number;
  maxConcurrency: number | null;
  /** The fair bound on requests in flight (`inFlightBound`); absent: none. */
  fairBound?: number | undefined;
  /** With a burst: the bucket's tokens now (`bucketTokens`); absent: no bucket term. */
  bucketTokens?: number | undefined;
  /** Adaptive pacing holds the destination (a Retry-After has not passed). */
  held?: boolean | undefined;
}

export type TickLimit = 'run' | 'window' | 'concurrency' | 'fair' | 'bucket' | 'hold';

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
  fairBound,
  bucketTokens,
  held,
}: TickInput): TickDecision {
  if (held === true) return { allow: 0, limitedBy: 'hold' };
  const run = plan.perRun - stillInQueue;
  const window = windowCap(plan) - sentInWindow - stillInQueue;
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
  if (fairBound !== undefined && fairBound - inFlight - stillInQueue < allow) {
    allow = fairBound - inFlight - stillInQueue;
    limitedBy = 'fair';
  }
  if (bucketTokens !== undefined && bucketTokens - stillInQueue < allow) {
    allow = bucketTokens - stillInQueue;
    limitedBy = 'bucket';
  }
  return { allow: Math.max(0, allow), limitedBy };
}

export interface AheadDecision extends TickDecision {
  /** When each of the `allow` requests may start, ascending: the moment its slot frees. */
  startsAt: number[];
}

/**
 * A tick that its window held back now (`decision`: allow 0, limited by the window) publishes
 * what the window will have room for by the end of the lead: `leaving` holds the moments the
 * sends that count now stop counting, ascending, of those that stop within the lead
 * (`SendWindow.leaving`). Its i-th request may start when the window has freed a slot for it
 * — then, with the i before it, no more count than the cap — so the limit holds in every
 * sliding window exactly as if the tick had run at each of those moments. The other terms
 * keep their values of now (in-flight requests may finish and the bucket may fill meanwhile:
 * an under-estimate only slows). Null: nothing frees within the lead, or another term binds.
 */
export function publishAhead(
  input: TickInput,
  decision: TickDecision,
  leaving: readonly number[],
): AheadDecision | null {
  if (decision.allow > 0 || decision.limitedBy !== 'window' || leaving.length === 0) return null;
  const ahead = decideTick({ ...input, sentInWindow: input.sentInWindow - leaving.length });
  if (ahead.allow <= 0) return null;
  // The window's room now, ≤ 0 here: the i-th request waits for the (i − roomNow)-th slot to free.
  const roomNow = windowCap(input.plan) - input.sentInWindow - input.stillInQueue;
  const startsAt = Array.from({ length: ahead.allow }, (_, i) => leaving[i - roomNow] as number);
  return { ...ahead, startsAt };
}

/**
 * The least time between two ticks of one destination held back by its window: a backlog
 * then follows the window out in small batches instead of one tick per freed slot.
 */
export const MIN_TICK_GAP_MS = 10;

/**
 * How many free slots a destination held back by its window waits for before its next tick:
 * 2 % of its limit, at least one. A backlog at 2,000 a second whose workers lag behind then
 * ticks when 40 slots have left the window, instead of every MIN_TICK_GAP_MS for the one or
 * two that did (each such tick is a claim and a publish of almost nothing). A freed slot
 * waits at most until the batch's last one frees: at a steady rate that loses ~1 % of it,
 * and a window that empties at once (a burst sent together) frees the batch at once.
 */
export function roomBatch(plan: Pick<RatePlan, 'limit'>): number {
  return Math.max(1, Math.floor(plan.limit / 50));
}

/**
 * The due time of the next tick of a destination that still has work.
 *
 * - After a full run (or a concurrency cap, or the fair bound): one interval after the tick that just ran
 *   (`due` is when it was due, so time spent running does not drift the schedule), and not
 *   before the window has room again.
 * - When the window held the tick back: as soon as the window has room (docs/design.md: "when the
 *   window is full, the next tick is due when the oldest send leaves it"), at least
 *   MIN_TICK_GAP_MS later. Waiting a whole interval here would halve a per-second rate.
 *   The same when the bucket or a hold held it back (`windowRoomAt` is then the latest of
 *   when the window, the bucket and the hold have room).
 */
export function nextTickAt(
  due: number,
  now: number,
  plan: RatePlan,
  windowRoomAt: number,
  limitedBy: TickLimit,
): number {
  if (limitedBy === 'window' || limitedBy === 'bucket' || limitedBy === 'hold')
    return Math.max(windowRoomAt, now + MIN_TICK_GAP_MS);
  return Math.max(due + plan.intervalMs, windowRoomAt, now);
}

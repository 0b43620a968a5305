/**
 * Fair delivery capacity (docs/adr/0014-fair-delivery-capacity.md): how many requests of one
 * destination may be in flight at once, so that a slow or hanging receiver holds a bounded
 * share of the delivery slots and never takes the other destinations' latency.
 *
 * Little's law: a destination sending `rate` requests a millisecond that each take `latency`
 * ms has `rate × latency` in flight on average. Its bound is that with headroom, within the
 * operator's ceiling (`SLUICE_DESTINATION_MAX_IN_FLIGHT`), and the user's `maxConcurrency`
 * (a fifo destination's 1) stays the tighter cap:
 *
 *   bound = min(maxConcurrency, ceiling, max(FAIR_FLOOR, ceil(rate × latency × FAIR_HEADROOM)))
 *
 * — except for a destination seen to answer quickly: when its observed latency × headroom is
 * within its tick interval, one tick's run is over before the next starts, and its bound is
 * its whole run (`perRun`) or more; a healthy destination is never slowed, whatever its rate.
 *
 * The latency is the larger of the moving average of its answered requests (null: none yet)
 * and how long its requests in flight have gone without any answer from it (`stalledMs`):
 * a receiver that stops answering raises its estimate before any of its requests times out.
 * That counts only with more than FAIR_FLOOR requests in flight: one or two slow requests of
 * a fast receiver (whose other requests answered) are not a stall. With as many in flight,
 * it is also at least what Little's law says of them: `inFlight ÷ rate` — a receiver that
 * answers a few requests quickly and leaves the others hanging keeps its average low and its
 * last answer recent, but its requests in flight pile up (at its limit's rate, never faster),
 * and that says how long they have been taking. Until it has answered once, a destination
 * is held to the ceiling (a first run of a new destination may not take every slot).
 */

import type { RatePlan } from './rate-plan.ts';

/** Little's law's headroom: the bound is twice the average in flight. */
export const FAIR_HEADROOM = 2;

/** The least bound of a destination that is not known to be fast (a slow one keeps sending). */
export const FAIR_FLOOR = 2;

/** The weight of a new answer in the moving average of a destination's latency. */
export const LATENCY_ALPHA = 0.3;

export interface FairInput {
  plan: Pick<RatePlan, 'limit' | 'periodMs' | 'perRun' | 'intervalMs'>;
  /** The moving average of its answered requests' latency (ms); null: none answered yet. */
  latencyMs: number | null;
  /**
   * How long its requests in flight have gone without an answer from it (ms): since the
   * oldest of them started, or since its last answer when that is later; 0: none in flight.
   */
  stalledMs: number;
  /** Its requests in flight now. */
  inFlight: number;
  /** The user's cap (maxConcurrency; 1 for fifo); null: none. */
  maxConcurrency: number | null;
  /** The operator's ceiling on one destination's requests in flight. */
  ceiling: number;
}

export interface FairBound {
  /** The most requests of the destination in flight at once (queued ones count too). */
  bound: number;
  /** Whether `bound` is the fair bound, tighter than the user's cap. */
  fair: boolean;
  /** The latency the bound was made from (ms); null when the destination has not answered. */
  latencyMs: number | null;
}

export function inFlightBound({
  plan,
  latencyMs,
  stalledMs,
  inFlight,
  maxConcurrency,
  ceiling,
}: FairInput): FairBound {
  const user = maxConcurrency ?? Number.POSITIVE_INFINITY;
  const piled = inFlight > FAIR_FLOOR;
  const latency =
    latencyMs === null
      ? null
      : Math.max(latencyMs, piled ? stalledMs : 0, piled ? inFlight / (plan.limit / plan.periodMs) : 0);
  const fair =
    latency === null
      ? ceiling
      : latency * FAIR_HEADROOM <= plan.intervalMs
        ? Math.max(plan.perRun, littles(plan, latency))
        : Math.min(ceiling, Math.max(FAIR_FLOOR, littles(plan, latency)));
  return fair < user
    ? { bound: fair, fair: true, latencyMs: latency }
    : { bound: user, fair: false, latencyMs: latency };
}

function littles(plan: Pick<RatePlan, 'limit' | 'periodMs'>, latencyMs: number): number {
  return Math.ceil((plan.limit / plan.periodMs) * latencyMs * FAIR_HEADROOM);
}

/** The moving average of a destination's latency after one more answer (`previous` null: the first). */
export function nextLatency(previous: number | null, sampleMs: number): number {
  const sample = Math.max(0, sampleMs);
  return previous === null ? sample : previous + LATENCY_ALPHA * (sample - previous);
}

/**
 * When a tick held back by the fair bound of a destination that has not answered yet looks
 * again: after as long as its requests have waited (`stalledMs`, at least `minGapMs`), so a
 * fast new receiver is seen fast within a few ms and a hanging one is looked at ever less
 * often — never later than the tick's own schedule (`next`).
 */
export function fairRecheckAt(now: number, stalledMs: number, minGapMs: number, next: number): number {
  return Math.min(next, now + Math.max(minGapMs, stalledMs));
}

/**
 * The burst allowance as a token bucket (docs/adr/0008-burst-and-adaptive-pacing.md): a
 * destination with `rateLimit.burst` = B may take up to B requests at once after an idle
 * spell, refilled at `limit` per period, so the long-run rate stays the limit ("2 per second,
 * bursts of 10").
 *
 * The bucket is kept in GCRA form (the generic cell rate algorithm): one number per
 * destination, the theoretical arrival time `tat`. With the emission interval T = period /
 * limit and the tolerance τ = (B − 1)·T, n more requests conform at t when
 * tat + (n − 1)·T − τ ≤ t, that is n ≤ B + floor((t − tat) / T), capped at B.
 *
 * Glossary:
 * - tat: when the bucket would be full again if nothing more were sent (ms);
 * - starts: how many requests have started (a counter, for the correction below);
 * - emissionMs: T, recorded by the tick that publishes (the effective limit may change it).
 *
 * The limit is judged at the receiver (docs/design.md I2, ADR 0001): a request arrives some time
 * after it starts. The bucket advances when a request *starts* (its earliest arrival), and
 * when its response comes (or its arrival bound passes) the bucket is corrected so that
 * request counts from its latest possible arrival: with the k requests started since,
 * tat ≥ arrivedBy + k·T. A tick also keeps `marginMs` of clock rounding, as the window does.
 * Pure data: nothing here reads a clock.
 */

import type { RatePlan } from './rate-plan.ts';

export interface BucketState {
  tat: number;
  starts: number;
  emissionMs: number;
}

export function emptyBucket(): BucketState {
  return { tat: 0, starts: 0, emissionMs: 0 };
}

/** T: the time one request's token takes to come back. */
export function emissionMs(plan: Pick<RatePlan, 'limit' | 'periodMs'>): number {
  return plan.periodMs / plan.limit;
}

/**
 * Tokens in the bucket at `now` (requests started count; queued ones do not yet): how many
 * may start now. Infinity without a burst (the bucket term is then absent).
 */
export function bucketTokens(
  plan: Pick<RatePlan, 'limit' | 'periodMs' | 'burst'>,
  tat: number,
  now: number,
  marginMs: number,
): number {
  if (plan.burst === null) return Number.POSITIVE_INFINITY;
  const t = emissionMs(plan);
  return Math.min(plan.burst, plan.burst + Math.floor((now - marginMs - tat) / t));
}

/**
 * The earliest moment ≥ now at which one more than `queued` may start: a scheduling hint
 * (the queued ones are assumed to start now), as SendWindow.roomAt.
 */
export function bucketRoomAt(
  plan: Pick<RatePlan, 'limit' | 'periodMs' | 'burst'>,
  tat: number,
  queued: number,
  now: number,
  marginMs: number,
): number {
  if (plan.burst === null) return now;
  const t = emissionMs(plan);
  return Math.max(now, tat + marginMs + (1 + queued - plan.burst) * t);
}

/** A request starts: it takes a token. Returns its start index, for `bucketFinish`. */
export function bucketStart(bucket: BucketState, now: number): number {
  const index = bucket.starts;
  bucket.starts++;
  if (bucket.emissionMs > 0) bucket.tat = Math.max(bucket.tat, now) + bucket.emissionMs;
  return index;
}

/**
 * The request started as `index` can have arrived no later than `arrivedBy`: it counts from
 * then, and each request started after it one interval later still.
 */
export function bucketFinish(bucket: BucketState, index: number, arrivedBy: number): void {
  if (bucket.emissionMs <= 0) return;
  bucket.tat = Math.max(bucket.tat, arrivedBy + (bucket.starts - index) * bucket.emissionMs);
}

/**
 * The bucket rebuilt from requests that may have been sent (after a restart or the loss of
 * Redis): each counts as started and arrived at `arrivedBy`, in order. Returns `tat`.
 */
export function tatFromArrivals(
  plan: Pick<RatePlan, 'limit' | 'periodMs'>,
  arrivedBy: readonly number[],
): number {
  const t = emissionMs(plan);
  let tat = 0;
  for (const at of [...arrivedBy].sort((a, b) => a - b)) tat = Math.max(tat, at) + t;
  return tat;
}

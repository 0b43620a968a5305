/**
 * The compliance audit: the most requests in any sliding window of one period.
 * Windows are [tᵢ, tᵢ + windowMs) anchored at every request, so the answer is exact
 * (the worst window always starts at some request). Two pointers over sorted times.
 */

export function maxInAnyWindow(sortedTimes: readonly number[], windowMs: number): number {
  let worst = 0;
  let lo = 0;
  for (let hi = 0; hi < sortedTimes.length; hi++) {
    const t = sortedTimes[hi] as number;
    while ((sortedTimes[lo] as number) <= t - windowMs) lo++;
    worst = Math.max(worst, hi - lo + 1);
  }
  return worst;
}

/** Requests per whole second, from `fromMs` (inclusive) for `seconds` buckets. */
export function perSecond(sortedTimes: readonly number[], fromMs: number, seconds: number): number[] {
  const buckets = new Array<number>(seconds).fill(0);
  for (const t of sortedTimes) {
    const i = Math.floor((t - fromMs) / 1_000);
    if (i >= 0 && i < seconds) buckets[i] = (buckets[i] as number) + 1;
  }
  return buckets;
}

/**
 * Requests that a token bucket of capacity `burst`, refilled at `limit` per `periodMs` and
 * full at the first request, would have refused (GCRA; a refused request takes no token).
 * 0 when the requests conform: the audit of a burst allowance's long-run rate.
 */
export function bucketRefusals(
  sortedTimes: readonly number[],
  limit: number,
  periodMs: number,
  burst: number,
): number {
  const t = periodMs / limit;
  const tolerance = (burst - 1) * t;
  let tat = Number.NEGATIVE_INFINITY;
  let refused = 0;
  for (const at of sortedTimes) {
    if (at < tat - tolerance) refused++;
    else tat = Math.max(tat, at) + t;
  }
  return refused;
}

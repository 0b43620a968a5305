/**
 * The exact sliding-window check (docs/design.md "How we measure"): the most arrivals in any
 * window [tᵢ, tᵢ + period) anchored at every arrival tᵢ. The worst window always starts at
 * an arrival, so checking those anchors is exact. Written here, apart from the service's own
 * audit, so the tests judge independently.
 */

export interface WorstWindow {
  /** Arrivals in the worst window. */
  count: number;
  /** Where the worst window starts (an arrival time); NaN when there are no arrivals. */
  from: number;
}

export function worstWindow(times: readonly number[], periodMs: number): WorstWindow {
  const sorted = [...times].sort((a, b) => a - b);
  let worst: WorstWindow = { count: 0, from: Number.NaN };
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    const from = sorted[start] as number;
    if (end < start) end = start;
    while (end < sorted.length && (sorted[end] as number) < from + periodMs) end++;
    if (end - start > worst.count) worst = { count: end - start, from };
  }
  return worst;
}

/** Arrivals in [from, to). */
export function between(times: readonly number[], from: number, to: number): number[] {
  return times.filter((t) => t >= from && t < to);
}

/**
 * The busiest window [tᵢ, tᵢ + period) among those anchored at arrivals in [from, to),
 * counting every arrival in `times` (not only those before `to`).
 */
export function busiestWindowStartingIn(
  times: readonly number[],
  periodMs: number,
  from: number,
  to: number,
): WorstWindow {
  let worst: WorstWindow = { count: 0, from: Number.NaN };
  for (const anchor of between(times, from, to)) {
    const count = between(times, anchor, anchor + periodMs).length;
    if (count > worst.count) worst = { count, from: anchor };
  }
  return worst;
}

/** A window for messages: times relative to `origin`, in ms. */
export function describeWindow(w: WorstWindow, periodMs: number, origin: number): string {
  const from = Math.round(w.from - origin);
  return `${w.count} arrivals in [${from} ms, ${from + periodMs} ms)`;
}

/**
 * Requests a token bucket of capacity `burst`, refilled continuously at `limit` per
 * `periodMs` and full at the first arrival, would have refused (a refused request takes no
 * token): 0 when the arrivals conform to "`limit` per period, bursts of `burst`". Simulated
 * token by token, apart from the service's own audit (GCRA), so the tests judge independently.
 */
export function bucketRefusals(
  times: readonly number[],
  limit: number,
  periodMs: number,
  burst: number,
): number {
  const sorted = [...times].sort((a, b) => a - b);
  let tokens = burst;
  let last = sorted[0] ?? 0;
  let refused = 0;
  for (const at of sorted) {
    tokens = Math.min(burst, tokens + ((at - last) * limit) / periodMs);
    last = at;
    if (tokens >= 1 - 1e-9) tokens -= 1;
    else refused++;
  }
  return refused;
}

/**
 * The rate plan: a destination's limit turned into a per-run count and a tick interval,
 * after Hookdeck's formula (docs/design.md "The tick arithmetic").
 *
 * - per second: perRun = limit, interval = 1 s;
 * - per minute/hour: perRun = ceil(limit / seconds in the period),
 *   interval = period / (limit / perRun), so the runs spread the limit evenly.
 *
 * With a burst allowance (`burst` ≥ limit, docs/adr/0008-burst-and-adaptive-pacing.md) the
 * destination is a token bucket of capacity `burst` refilled at `limit` per period
 * (`bucket.ts`), and no sliding window of one period holds more than `burst`: a tick may
 * then take up to `burst` at once (`perRun`), and the bucket paces the long run.
 */

export type Period = 'second' | 'minute' | 'hour';

export const PERIODS: readonly Period[] = ['second', 'minute', 'hour'];

export const PERIOD_MS: Readonly<Record<Period, number>> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
};

export interface RateLimit {
  limit: number;
  period: Period;
  /** Most requests at once after an idle spell; absent: no burst beyond the limit. */
  burst?: number | undefined;
}

export interface RatePlan {
  /** The long-run rate: requests per `periodMs` (without a burst, per sliding window). */
  limit: number;
  /** The bucket's capacity, and the most requests in any sliding window; null: none. */
  burst: number | null;
  periodMs: number;
  /** Most deliveries one tick publishes. */
  perRun: number;
  /** Time between two scheduled ticks. */
  intervalMs: number;
}

export function ratePlan({ limit, period, burst }: RateLimit): RatePlan {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const periodMs = PERIOD_MS[period];
  if (periodMs === undefined) throw new RangeError(`period must be second, minute or hour, got ${period}`);
  if (burst !== undefined && (!Number.isInteger(burst) || burst < limit))
    throw new RangeError(`burst must be an integer ≥ the limit (${limit}), got ${burst}`);
  const withBurst = burst === undefined || burst === limit ? null : burst;
  if (period === 'second')
    return { limit, burst: withBurst, periodMs, perRun: withBurst ?? limit, intervalMs: 1_000 };
  const perRun = Math.ceil(limit / (periodMs / 1_000));
  const intervalMs = periodMs / (limit / perRun);
  return { limit, burst: withBurst, periodMs, perRun: Math.max(perRun, withBurst ?? 0), intervalMs };
}

/** The most requests in any sliding window of one period: the burst, or else the limit. */
export function windowCap(plan: Pick<RatePlan, 'limit' | 'burst'>): number {
  return plan.burst ?? plan.limit;
}

/**
 * Whether a change of a destination's rate limit from `before` (undefined: not known) to
 * `after` lowers the most a window may hold. Requests started under `before` may then still
 * arrive after the change: its answer waits for them (docs/adr/0012). At most the old cap of
 * them are on their way, so a cap as high or higher needs no wait, whatever the period.
 */
export function lowersCap(before: RateLimit | undefined, after: RateLimit): boolean {
  return before === undefined || windowCap(ratePlan(after)) < windowCap(ratePlan(before));
}

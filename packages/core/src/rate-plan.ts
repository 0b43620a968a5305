/**
 * The rate plan: a destination's limit turned into a per-run count and a tick interval,
 * after Hookdeck's formula (DESIGN "The tick arithmetic").
 *
 * - per second: perRun = limit, interval = 1 s;
 * - per minute/hour: perRun = ceil(limit / seconds in the period),
 *   interval = period / (limit / perRun), so the runs spread the limit evenly.
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
}

export interface RatePlan {
  /** Most requests in any sliding window of `periodMs`. */
  limit: number;
  periodMs: number;
  /** Most deliveries one tick publishes. */
  perRun: number;
  /** Time between two scheduled ticks. */
  intervalMs: number;
}

export function ratePlan({ limit, period }: RateLimit): RatePlan {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const periodMs = PERIOD_MS[period];
  if (periodMs === undefined) throw new RangeError(`period must be second, minute or hour, got ${period}`);
  if (period === 'second') return { limit, periodMs, perRun: limit, intervalMs: 1_000 };
  const perRun = Math.ceil(limit / (periodMs / 1_000));
  const intervalMs = periodMs / (limit / perRun);
  return { limit, periodMs, perRun, intervalMs };
}

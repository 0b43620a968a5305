/**
 * A destination's rate-limit history: one row per change of its `rateLimit` (limit, period or
 * burst), written by `updateDestination` in the same transaction as the change, with the limit
 * before and after. The stats endpoint returns the changes of its span, so a chart draws the
 * limit in force at each moment (before the span's first change: that change's `from`; after
 * the last: the destination's limit now). Written once for both stores, as destination-sql.ts.
 */

import type { RateLimit } from '@sluice/core';
import type { Mark } from './destination-sql.ts';

export interface RateLimitChange {
  /** Milliseconds since the epoch: the `updatedAt` of the patch that changed it. */
  at: number;
  from: RateLimit;
  to: RateLimit;
}

/** Same limit, period and burst (an absent burst is no burst). */
export const sameRateLimit = (a: RateLimit, b: RateLimit): boolean =>
  a.limit === b.limit && a.period === b.period && (a.burst ?? null) === (b.burst ?? null);

/** Takes `rateLimitChangeValues`. */
export const insertRateLimitChangeSql = (mark: Mark): string =>
  `INSERT INTO rate_limit_changes (destination_id, at, from_limit, to_limit)
   VALUES (${mark(1)}, ${mark(2)}, ${mark(3)}, ${mark(4)})`;

export const rateLimitChangeValues = (destinationId: string, c: RateLimitChange): (string | number)[] => [
  destinationId,
  c.at,
  JSON.stringify(c.from),
  JSON.stringify(c.to),
];

/** The changes of one destination in [from, to), oldest first: takes (destinationId, from, to). */
export const rateLimitChangesSql = (mark: Mark): string =>
  `SELECT at, from_limit, to_limit FROM rate_limit_changes
   WHERE destination_id = ${mark(1)} AND at >= ${mark(2)} AND at < ${mark(3)}
   ORDER BY at, id`;

export const rateLimitChangeFromRow = (r: Record<string, unknown>): RateLimitChange => ({
  at: Number(r.at),
  from: JSON.parse(String(r.from_limit)) as RateLimit,
  to: JSON.parse(String(r.to_limit)) as RateLimit,
});

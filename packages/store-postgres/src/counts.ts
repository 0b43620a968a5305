/**
 * Backlog and outcome counts of many destinations in one statement of three grouped reads,
 * each on a partial index: pending (`deliveries_due`), claimed (`deliveries_claimed`), and
 * delivered/dead since a time (`deliveries_settled`). The same figures as `countsFor`, for a
 * page of destinations.
 */

import { type DestinationCounts, emptyCounts } from '@sluice/store';
import type { Queryable } from './db.ts';

/** $1 the destination ids, $2 since. One row per destination and kind of count. */
const COUNTS_FOR_MANY = `
  SELECT destination_id, 'pending' AS kind, count(*) AS n, min(created_at) AS oldest FROM deliveries
  WHERE status = 'pending' AND destination_id = ANY($1::text[]) GROUP BY destination_id
  UNION ALL
  SELECT destination_id, 'in_queue', count(*), NULL FROM deliveries
  WHERE status IN ('queued', 'delivering') AND destination_id = ANY($1::text[]) GROUP BY destination_id
  UNION ALL
  SELECT destination_id, status, count(*), NULL FROM deliveries
  WHERE status IN ('delivered', 'dead') AND updated_at >= $2 AND destination_id = ANY($1::text[])
  GROUP BY destination_id, status`;

export async function countsForMany(
  db: Queryable,
  destinationIds: string[],
  since: number,
): Promise<Map<string, DestinationCounts>> {
  const counts = new Map(destinationIds.map((id) => [id, emptyCounts()]));
  if (destinationIds.length === 0) return counts;
  for (const r of await db.query(COUNTS_FOR_MANY, [destinationIds, since])) {
    const c = counts.get(r.destination_id as string);
    if (c === undefined) continue;
    const n = r.n as number;
    if (r.kind === 'pending') {
      c.pending = n;
      c.oldestPendingAt = (r.oldest as number | null) ?? null;
    } else if (r.kind === 'in_queue') c.inQueue = n;
    else if (r.kind === 'delivered') c.delivered = n;
    else c.dead = n;
  }
  return counts;
}

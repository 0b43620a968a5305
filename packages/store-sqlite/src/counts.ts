/**
 * Backlog and outcome counts of many destinations in three grouped reads, each on a partial
 * index: pending (`deliveries_due`), claimed (`deliveries_claimed`), and delivered/dead since
 * a time (`deliveries_settled`). The same figures as `countsFor`, for a page of destinations.
 */

import { type DestinationCounts, emptyCounts } from '@sluice/store';
import type { Sql } from './lists.ts';

export function countsForMany(
  db: Sql,
  destinationIds: string[],
  since: number,
): Map<string, DestinationCounts> {
  const counts = new Map(destinationIds.map((id) => [id, emptyCounts()]));
  if (destinationIds.length === 0) return counts;
  const ids = JSON.stringify(destinationIds);
  const of = (r: Record<string, unknown>) => counts.get(r.destination_id as string) ?? emptyCounts();
  for (const r of db
    .sql(
      `SELECT destination_id, count(*) AS n, min(created_at) AS oldest FROM deliveries
       WHERE status = 'pending' AND destination_id IN (SELECT value FROM json_each(?)) GROUP BY destination_id`,
    )
    .all(ids)) {
    const c = of(r);
    c.pending = r.n as number;
    c.oldestPendingAt = (r.oldest as number | null) ?? null;
  }
  for (const r of db
    .sql(
      `SELECT destination_id, count(*) AS n FROM deliveries
       WHERE status IN ('queued', 'delivering') AND destination_id IN (SELECT value FROM json_each(?))
       GROUP BY destination_id`,
    )
    .all(ids)) {
    of(r).inQueue = r.n as number;
  }
  for (const r of db
    .sql(
      `SELECT destination_id, status, count(*) AS n FROM deliveries
       WHERE status IN ('delivered', 'dead') AND updated_at >= ?
         AND destination_id IN (SELECT value FROM json_each(?))
       GROUP BY destination_id, status`,
    )
    .all(since, ids)) {
    const c = of(r);
    if (r.status === 'delivered') c.delivered = r.n as number;
    else c.dead = r.n as number;
  }
  return counts;
}

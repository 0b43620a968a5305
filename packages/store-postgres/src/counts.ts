/**
 * Backlog and outcome counts of many destinations in one statement: for each, the three reads
 * of `countsFor` (lifecycle.ts), each on a partial index under its destination's id: pending
 * (`deliveries_due` or `deliveries_fifo`), claimed (`deliveries_claimed`), and delivered/dead
 * since a time (`deliveries_settled`). The same figures as `countsFor`, for a page of
 * destinations.
 *
 * Each destination's reads are a lateral subquery of its own, so each is under its id whatever
 * the connection's plan was made on. As one grouped read per kind over `destination_id =
 * ANY($1)`, a generic plan made while `deliveries` was nearly empty counts the pending and the
 * claimed deliveries from the whole of `deliveries_unfinished_tenant`, twice: every unfinished
 * delivery of every tenant (docs/performance.md, "Postgres statements and their generic
 * plans").
 */

import { type DestinationCounts, emptyCounts } from '@sluice/store';
import type { Queryable } from './db.ts';

/** $1 the destination ids, $2 since. One row per destination. */
const COUNTS_FOR_MANY = `
  SELECT r.id AS destination_id, p.pending, p.oldest, q.in_queue, s.delivered, s.dead
  FROM unnest($1::text[]) AS r(id)
  CROSS JOIN LATERAL (SELECT count(*) AS pending, min(created_at) AS oldest FROM deliveries
    WHERE destination_id = r.id AND status = 'pending') p
  CROSS JOIN LATERAL (SELECT count(*) AS in_queue FROM deliveries
    WHERE destination_id = r.id AND status IN ('queued', 'delivering')) q
  CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE status = 'delivered') AS delivered,
      count(*) FILTER (WHERE status = 'dead') AS dead
    FROM deliveries WHERE destination_id = r.id AND status IN ('delivered', 'dead') AND updated_at >= $2) s`;

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
    c.pending = r.pending as number;
    c.oldestPendingAt = (r.oldest as number | null) ?? null;
    c.inQueue = r.in_queue as number;
    c.delivered = r.delivered as number;
    c.dead = r.dead as number;
  }
  return counts;
}

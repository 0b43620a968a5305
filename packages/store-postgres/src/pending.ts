/**
 * The destinations that have pending deliveries, walked on the partial index `deliveries_due`
 * (its order, so an index-only scan of it) one destination at a time (a loose index scan: one probe per destination with work;
 * Postgres before 18 has no skip scan). The sweeper, the backlog gauge and the alerter read
 * through it, so destinations with nothing pending cost nothing there (docs/design.md I4), however
 * many there are.
 */
export const WITH_PENDING = `WITH RECURSIVE pending(id) AS (
  (SELECT destination_id FROM deliveries WHERE status = 'pending'
   ORDER BY destination_id, next_attempt_at, seq LIMIT 1)
  UNION ALL
  SELECT (SELECT d.destination_id FROM deliveries d
          WHERE d.status = 'pending' AND d.destination_id > pending.id
          ORDER BY d.destination_id, d.next_attempt_at, d.seq LIMIT 1)
  FROM pending WHERE pending.id IS NOT NULL)`;

/**
 * Each pending destination's row, looked up by its primary key. The planner cannot estimate
 * how many rows the recursive walk yields (it guesses ~100) and, with young statistics on
 * `destinations`, may choose to scan the walk again for every destination: a sweep quadratic
 * in the pending destinations. The LIMIT keeps this subquery from being flattened into a
 * join, so it stays one index probe per pending destination.
 */
export const PENDING_DESTINATION = `CROSS JOIN LATERAL (
  SELECT * FROM destinations WHERE id = p.id LIMIT 1) t`;

/**
 * $1 a destination: its earliest pending due time, the first entry of `deliveries_due` under
 * its id. Not `min(next_attempt_at)`: a connection's generic plan made while `deliveries` was
 * nearly empty answers that from `deliveries_fifo`, reading every pending delivery of the
 * destination (a suspended destination's whole backlog). In this order only `deliveries_due`
 * gives the first row without reading the others.
 */
export const NEXT_PENDING = `SELECT next_attempt_at AS at FROM deliveries WHERE destination_id = $1 AND status = 'pending'
  ORDER BY next_attempt_at LIMIT 1`;

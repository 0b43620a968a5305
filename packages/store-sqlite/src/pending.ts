/**
 * The destinations that have pending deliveries, walked on the partial index `deliveries_due`
 * one destination at a time (a loose index scan: one probe per destination with work). The
 * sweeper, the backlog gauge and the alerter read through it, so destinations with nothing
 * pending cost nothing there (docs/design.md I4), however many there are.
 */
export const WITH_PENDING = `WITH RECURSIVE pending(id) AS (
  SELECT (SELECT min(destination_id) FROM deliveries WHERE status = 'pending')
  UNION ALL
  SELECT (SELECT min(d.destination_id) FROM deliveries d WHERE d.status = 'pending' AND d.destination_id > pending.id)
  FROM pending WHERE pending.id IS NOT NULL)`;

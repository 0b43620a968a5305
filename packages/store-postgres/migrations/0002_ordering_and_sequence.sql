-- Best-effort FIFO per destination and the per-destination sequence (docs/adr/0006).
--
-- destinations.ordering: 'none' (default) or 'fifo'.
-- destinations.next_sequence: the sequence the destination's next delivery takes. The accept
--   statement bumps it, which locks the destination's row until the commit: concurrent
--   accepts for one destination take their sequences in commit order, with no gap.
-- deliveries.sequence: the delivery's place in its destination's order (`webhook-sequence`),
--   kept across retries and replays. Not `seq`, the table-wide insertion order.
ALTER TABLE destinations
  ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'fifo')),
  ADD COLUMN next_sequence BIGINT NOT NULL DEFAULT 1;
ALTER TABLE deliveries ADD COLUMN sequence BIGINT;

-- Deliveries written before this migration: numbered in insertion order.
UPDATE deliveries d SET sequence = n.sequence
FROM (SELECT id, row_number() OVER (PARTITION BY destination_id ORDER BY seq) AS sequence FROM deliveries) n
WHERE d.id = n.id;
UPDATE destinations t SET next_sequence =
  1 + coalesce((SELECT max(d.sequence) FROM deliveries d WHERE d.destination_id = t.id), 0);
ALTER TABLE deliveries ALTER COLUMN sequence SET NOT NULL;

-- A fifo destination's claim: its pending deliveries in sequence order.
CREATE INDEX deliveries_sequence ON deliveries (destination_id, sequence) WHERE status = 'pending';

-- Best-effort FIFO per destination and the per-destination sequence (docs/adr/0006).
--
-- destinations.ordering: 'none' (default) or 'fifo'.
-- destinations.next_sequence: the sequence the destination's next delivery takes; bumped in
--   the accept transaction, so sequences are 1, 2, 3… per destination with no gap.
-- deliveries.sequence: the delivery's place in its destination's order (`webhook-sequence`),
--   kept across retries and replays.
ALTER TABLE destinations ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'fifo'));
ALTER TABLE destinations ADD COLUMN next_sequence INTEGER NOT NULL DEFAULT 1;
ALTER TABLE deliveries ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0;

-- Deliveries written before this migration: numbered in insertion order.
UPDATE deliveries SET sequence = n.sequence
FROM (SELECT rowid AS rid, row_number() OVER (PARTITION BY destination_id ORDER BY rowid) AS sequence
      FROM deliveries) AS n
WHERE deliveries.rowid = n.rid;
UPDATE destinations SET next_sequence =
  1 + coalesce((SELECT max(d.sequence) FROM deliveries d WHERE d.destination_id = destinations.id), 0);

-- A fifo destination's claim: its pending deliveries in sequence order.
CREATE INDEX deliveries_sequence ON deliveries (destination_id, sequence) WHERE status = 'pending';

-- The per-destination sequence is taken at claim time, not at accept (docs/adr/0006).
--
-- deliveries.sequence: NULL until the delivery's first claim, which gives it the next
--   `destinations.next_sequence` (bumped once per claim); kept after that. Deliveries that
--   already have one keep it.
-- destinations.next_sequence: unchanged; now bumped by the claim, no longer by the accept.
ALTER TABLE deliveries ALTER COLUMN sequence DROP NOT NULL;

-- A fifo destination's claim: numbered deliveries (retries, replays) by sequence, then the
-- unnumbered ones (first attempts) in insertion order — ascending, NULLs last, as the claim
-- reads it. Replaces the index on (destination_id, sequence) alone.
CREATE INDEX deliveries_fifo ON deliveries (destination_id, sequence, seq) WHERE status = 'pending';
DROP INDEX deliveries_sequence;

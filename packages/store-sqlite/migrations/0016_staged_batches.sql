-- A batch accepted in slices (staged-batches.ts): its events and deliveries are staged here,
-- a slice a transaction, then the batch is decided in one durable write, then moved into
-- events and deliveries a slice at a time, each event with its deliveries. No index but the batch's: nothing reads these
-- but the mover and the start, which moves a decided batch's rows and drops an undecided one's.
CREATE TABLE staged_batches (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  decided    INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE staged_events (
  batch_id        TEXT NOT NULL,
  seq             INTEGER NOT NULL,
  id              TEXT NOT NULL,
  tenant_id       TEXT NOT NULL,
  type            TEXT NOT NULL,
  payload         TEXT NOT NULL,
  idempotency_key TEXT,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (batch_id, seq)
) STRICT, WITHOUT ROWID;

-- Each event's deliveries beside it (event_seq), in the order they were given (seq).
CREATE TABLE staged_deliveries (
  batch_id       TEXT NOT NULL,
  event_seq      INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  id             TEXT NOT NULL,
  event_id       TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  tenant_id      TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (batch_id, event_seq, seq)
) STRICT, WITHOUT ROWID;

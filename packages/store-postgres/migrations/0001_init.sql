-- Sluice distributed schema: the SQLite schema (store-sqlite/migrations) in Postgres terms.
-- Times are BIGINT milliseconds since the epoch. Ids are prefixed ULIDs compared bytewise
-- (COLLATE "C"), so `id < cursor ORDER BY id DESC` pages in creation order whatever the
-- database's locale. Unqualified names: the runner's search_path picks the schema.

CREATE TABLE tenants (
  id           TEXT COLLATE "C" PRIMARY KEY,
  name         TEXT NOT NULL,
  api_key_hash TEXT NOT NULL UNIQUE,
  created_at   BIGINT NOT NULL
);

CREATE TABLE destinations (
  id                     TEXT COLLATE "C" PRIMARY KEY,
  tenant_id              TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
  name                   TEXT,
  url                    TEXT NOT NULL,
  rate_limit             INTEGER NOT NULL,
  rate_period            TEXT NOT NULL CHECK (rate_period IN ('second', 'minute', 'hour')),
  max_concurrency        INTEGER,
  event_types            JSONB NOT NULL,          -- array of patterns
  retry_max_attempts     INTEGER NOT NULL,
  retry_initial_delay_ms BIGINT NOT NULL,
  retry_max_delay_ms     BIGINT NOT NULL,
  timeout_ms             BIGINT NOT NULL,
  secrets                JSONB NOT NULL,          -- array of {secret, expiresAt}
  state                  TEXT NOT NULL CHECK (state IN ('active', 'paused', 'disabled')),
  disabled_reason        TEXT,
  created_at             BIGINT NOT NULL,
  updated_at             BIGINT NOT NULL,
  deleted_at             BIGINT                   -- soft delete: deliveries keep their destination
);

CREATE INDEX destinations_tenant ON destinations (tenant_id, id) WHERE deleted_at IS NULL;

-- The payload is TEXT, not JSONB: its exact bytes are what every destination receives and
-- what is signed, and JSONB would re-serialize it.
CREATE TABLE events (
  id              TEXT COLLATE "C" PRIMARY KEY,
  tenant_id       TEXT COLLATE "C" NOT NULL,
  type            TEXT NOT NULL,
  payload         TEXT NOT NULL,
  idempotency_key TEXT,
  created_at      BIGINT NOT NULL
);

-- The arbiter of `INSERT … ON CONFLICT DO NOTHING` in acceptEvents: concurrent requests with
-- one key wait on each other here, and the losers read the winner.
CREATE UNIQUE INDEX events_idempotency ON events (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Retention: events by age.
CREATE INDEX events_created ON events (created_at);

-- Deliveries and destinations are related without foreign keys, as in SQLite: a key share
-- lock on the destination row for every delivery written would turn a busy destination into
-- a MultiXact hot spot, and the API checks the destination before accepting.
CREATE TABLE deliveries (
  id              TEXT COLLATE "C" PRIMARY KEY,
  -- Insertion order (SQLite's rowid): the tie-break of the claim order, and the order of an
  -- event's deliveries (the order of its destination ids).
  seq             BIGINT GENERATED ALWAYS AS IDENTITY,
  event_id        TEXT COLLATE "C" NOT NULL,
  destination_id  TEXT COLLATE "C" NOT NULL,
  tenant_id       TEXT COLLATE "C" NOT NULL,
  status          TEXT NOT NULL
                  CHECK (status IN ('pending', 'queued', 'delivering', 'delivered', 'dead', 'cancelled')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  -- A replayed or manually retried delivery gets a fresh attempt budget: the retry policy
  -- counts attempts since `attempt_base`, while attempt numbers keep counting up.
  attempt_base    INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  claimed_at      BIGINT,
  last_error      TEXT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);

-- Due work: the tick's claim reads this index in claim order (due time, then insertion), and
-- the sweeper's earliest-due lookups read it too. Only pending rows: it stays small.
CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at, seq) WHERE status = 'pending';
-- Claimed work: lease expiry and the tick's shutdown check. Bounded by the delivery queue.
CREATE INDEX deliveries_claimed ON deliveries (destination_id, claimed_at) WHERE status IN ('queued', 'delivering');
CREATE INDEX deliveries_event ON deliveries (event_id);
-- Counts of settled work per destination, and replay of dead deliveries.
CREATE INDEX deliveries_settled ON deliveries (destination_id, status, updated_at) WHERE status IN ('delivered', 'dead');
-- Listing: a tenant's or a destination's deliveries newest first.
CREATE INDEX deliveries_tenant ON deliveries (tenant_id, id);
CREATE INDEX deliveries_destination ON deliveries (destination_id, id);
-- Retention: settled deliveries by age.
CREATE INDEX deliveries_retention ON deliveries (updated_at) WHERE status IN ('delivered', 'cancelled');

CREATE TABLE attempts (
  id               TEXT COLLATE "C" PRIMARY KEY,
  delivery_id      TEXT COLLATE "C" NOT NULL,
  destination_id   TEXT COLLATE "C" NOT NULL,
  attempt          INTEGER NOT NULL,
  started_at       BIGINT NOT NULL,
  finished_at      BIGINT NOT NULL,
  status_code      INTEGER,
  error_code       TEXT,
  error_message    TEXT,
  response_excerpt TEXT
);

CREATE INDEX attempts_delivery ON attempts (delivery_id, attempt);
-- Send windows and the compliance audit: a destination's attempts by start time.
CREATE INDEX attempts_destination_time ON attempts (destination_id, started_at);
-- Send windows after a restart: every attempt since a time.
CREATE INDEX attempts_time ON attempts (started_at);

-- Sluice single-box schema. Times are integer milliseconds since the epoch.

CREATE TABLE tenants (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  api_key_hash TEXT NOT NULL UNIQUE,
  created_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE destinations (
  id                     TEXT PRIMARY KEY,
  tenant_id              TEXT NOT NULL REFERENCES tenants (id),
  name                   TEXT,
  url                    TEXT NOT NULL,
  rate_limit             INTEGER NOT NULL,
  rate_period            TEXT NOT NULL CHECK (rate_period IN ('second', 'minute', 'hour')),
  max_concurrency        INTEGER,
  event_types            TEXT NOT NULL,           -- JSON array of patterns
  retry_max_attempts     INTEGER NOT NULL,
  retry_initial_delay_ms INTEGER NOT NULL,
  retry_max_delay_ms     INTEGER NOT NULL,
  timeout_ms             INTEGER NOT NULL,
  secrets                TEXT NOT NULL,           -- JSON array of {secret, expiresAt}
  state                  TEXT NOT NULL CHECK (state IN ('active', 'paused', 'disabled')),
  disabled_reason        TEXT,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  deleted_at             INTEGER
) STRICT;

CREATE INDEX destinations_tenant ON destinations (tenant_id, id) WHERE deleted_at IS NULL;

CREATE TABLE events (
  id              TEXT PRIMARY KEY,
  tenant_id       TEXT NOT NULL,
  type            TEXT NOT NULL,
  payload         TEXT NOT NULL,
  idempotency_key TEXT,
  created_at      INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX events_idempotency ON events (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE deliveries (
  id              TEXT PRIMARY KEY,
  event_id        TEXT NOT NULL,
  destination_id  TEXT NOT NULL,
  tenant_id       TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'queued', 'delivering', 'delivered', 'dead', 'cancelled')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  claimed_at      INTEGER,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;

-- Due work: the tick's claim and the sweeper read only pending rows.
CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at) WHERE status = 'pending';
-- Claimed work: lease expiry and the tick's shutdown check.
CREATE INDEX deliveries_claimed ON deliveries (destination_id, claimed_at) WHERE status IN ('queued', 'delivering');
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_settled ON deliveries (destination_id, status, updated_at) WHERE status IN ('delivered', 'dead');

CREATE TABLE attempts (
  id               TEXT PRIMARY KEY,
  delivery_id      TEXT NOT NULL,
  destination_id   TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  started_at       INTEGER NOT NULL,
  finished_at      INTEGER NOT NULL,
  status_code      INTEGER,
  error_code       TEXT,
  error_message    TEXT,
  response_excerpt TEXT
) STRICT;

CREATE INDEX attempts_delivery ON attempts (delivery_id, attempt);
CREATE INDEX attempts_destination_time ON attempts (destination_id, started_at);
CREATE INDEX attempts_time ON attempts (started_at);

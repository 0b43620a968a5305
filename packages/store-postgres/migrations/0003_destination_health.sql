-- Endpoint health, the circuit breaker of each destination (docs/adr/0007): the SQLite
-- migration 0004 in Postgres terms. The columns follow @sluice/core's `Health`; the
-- completion writer updates them with each batch, in its one statement.
-- `health_state_before` is the state before the last health write (a transition when it
-- differs from `health_state`): what RETURNING cannot say on Postgres 15.
ALTER TABLE destinations
  ADD COLUMN health_state TEXT NOT NULL DEFAULT 'healthy'
    CHECK (health_state IN ('healthy', 'degraded', 'suspended')),
  ADD COLUMN health_state_before TEXT NOT NULL DEFAULT 'healthy',
  ADD COLUMN health_since BIGINT,
  ADD COLUMN health_consecutive_failures INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN health_window_start BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN health_window_attempts INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN health_window_failures INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN health_probe_failures INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN health_next_probe_at BIGINT,
  ADD COLUMN health_last_error_class TEXT;

-- The history the API shows (GET /v1/destinations/:id/health): one row per transition.
CREATE TABLE destination_health_transitions (
  id                   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  destination_id       TEXT COLLATE "C" NOT NULL,
  at                   BIGINT NOT NULL,
  from_state           TEXT NOT NULL,
  to_state             TEXT NOT NULL,
  -- failures | success | operator
  reason               TEXT NOT NULL,
  consecutive_failures INTEGER NOT NULL,
  error_class          TEXT
);

CREATE INDEX destination_health_transitions_destination ON destination_health_transitions (destination_id, id);

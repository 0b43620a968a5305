-- Backlog alerts (docs/adr/0009-backlog-alerts.md): one row per firing alert, at most one
-- per destination and kind. The primary key is the arbiter of a raise: every rate-limiter
-- replica evaluates, each inserts with ON CONFLICT DO NOTHING, so exactly one raises; a
-- resolve deletes the row it read (destination, kind and raised_at), so exactly one resolves.
CREATE TABLE backlog_alerts (
  destination_id TEXT COLLATE "C" NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('pending_count', 'pending_age')),
  tenant_id      TEXT COLLATE "C" NOT NULL,
  threshold      BIGINT NOT NULL,
  value          BIGINT NOT NULL,            -- observed when raised (a count, or seconds)
  raised_at      BIGINT NOT NULL,
  PRIMARY KEY (destination_id, kind)
);

CREATE INDEX backlog_alerts_tenant ON backlog_alerts (tenant_id);

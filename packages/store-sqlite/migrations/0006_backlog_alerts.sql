-- Backlog alerts (docs/adr/0009-backlog-alerts.md): one row per firing alert, at most one
-- per destination and kind. The primary key is what makes a raise atomic: the evaluation
-- inserts with ON CONFLICT DO NOTHING, so a firing alert is never raised twice; a resolve
-- deletes the row it read (destination, kind and raised_at), so it is resolved once.
CREATE TABLE backlog_alerts (
  destination_id TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('pending_count', 'pending_age')),
  tenant_id      TEXT NOT NULL,
  threshold      INTEGER NOT NULL,
  value          INTEGER NOT NULL,           -- observed when raised (a count, or seconds)
  raised_at      INTEGER NOT NULL,
  PRIMARY KEY (destination_id, kind)
) STRICT;

CREATE INDEX backlog_alerts_tenant ON backlog_alerts (tenant_id);

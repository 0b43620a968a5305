-- A destination's rate-limit history (docs/api.md "Stats"): one row per change of its
-- rateLimit, written with the change; `from_limit` and `to_limit` are the RateLimit JSON
-- before and after. The stats endpoint reads a span's changes to draw the limit in force.
CREATE TABLE rate_limit_changes (
  id INTEGER PRIMARY KEY,
  destination_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  from_limit TEXT NOT NULL,
  to_limit TEXT NOT NULL
);
CREATE INDEX rate_limit_changes_destination ON rate_limit_changes (destination_id, at);

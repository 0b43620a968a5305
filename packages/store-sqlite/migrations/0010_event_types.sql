-- The event-type catalog (docs/api.md "Event-type catalog"): the operator's types, by name.
-- `schema` and `example` are JSON text as sent; NULL: none. Sluice's own `sluice.…` types
-- are not rows (they are built in).
CREATE TABLE event_types (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  schema TEXT,
  example TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- The event-type catalog (docs/api.md "Event-type catalog"): the operator's types, by name
-- (collated bytewise, "C", so a page's order is the API's and SQLite's). `schema` and
-- `example` are JSON text as sent; NULL: none. Sluice's own `sluice.…` types are not rows
-- (they are built in).
CREATE TABLE event_types (
  name TEXT COLLATE "C" PRIMARY KEY,
  description TEXT NOT NULL,
  schema TEXT,
  example TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

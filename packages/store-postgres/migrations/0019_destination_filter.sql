-- A destination's filter (docs/api.md "Filters"): a query document over { type, payload }.
-- NULL: every event of its eventTypes.
ALTER TABLE destinations ADD COLUMN filter JSONB;

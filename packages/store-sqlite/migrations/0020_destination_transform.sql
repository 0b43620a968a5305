-- A destination's transform (docs/api.md "Transforms"): { "code" } of its handler(webhook),
-- run at each attempt. NULL: what was posted is sent.
ALTER TABLE destinations ADD COLUMN transform TEXT;

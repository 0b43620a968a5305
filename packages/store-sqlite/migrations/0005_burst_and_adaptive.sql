-- Burst allowance and adaptive pacing (docs/adr/0008-burst-and-adaptive-pacing.md):
-- `rate_burst` NULL is no burst (the sliding window alone); `adaptive` 0/1.
ALTER TABLE destinations ADD COLUMN rate_burst INTEGER CHECK (rate_burst IS NULL OR rate_burst >= rate_limit);
ALTER TABLE destinations ADD COLUMN adaptive INTEGER NOT NULL DEFAULT 0 CHECK (adaptive IN (0, 1));

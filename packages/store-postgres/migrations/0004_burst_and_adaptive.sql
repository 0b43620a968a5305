-- Burst allowance and adaptive pacing (docs/adr/0008-burst-and-adaptive-pacing.md):
-- `rate_burst` NULL is no burst (the sliding window alone).
ALTER TABLE destinations ADD COLUMN rate_burst INTEGER CHECK (rate_burst IS NULL OR rate_burst >= rate_limit);
ALTER TABLE destinations ADD COLUMN adaptive BOOLEAN NOT NULL DEFAULT false;

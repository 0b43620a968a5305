-- What opened a destination's circuit (@sluice/core health.ts): 'consecutive' (failures in a
-- row) or 'failure_rate' (the window's share of failures); NULL while it is not suspended.
ALTER TABLE destinations ADD COLUMN health_suspend_reason TEXT;

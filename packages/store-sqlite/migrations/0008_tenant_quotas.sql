-- Tenant ingest quotas (docs/operations.md "Tenant quotas"): the operator's own setting per
-- tenant; NULL: none of its own (the operator-wide default, if any, applies).
ALTER TABLE tenants ADD COLUMN quota_events_per_second INTEGER;
ALTER TABLE tenants ADD COLUMN quota_pending_events INTEGER;

-- The pending-events quota counts a tenant's unfinished events (Store.pendingEvents): the
-- distinct events of its deliveries not yet finished, read from this index up to the quota.
CREATE INDEX deliveries_unfinished_tenant ON deliveries (tenant_id, event_id)
  WHERE status IN ('pending', 'queued', 'delivering');

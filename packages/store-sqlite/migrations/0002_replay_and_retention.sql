-- A replayed or manually retried delivery gets a fresh attempt budget: the retry policy
-- counts attempts since `attempt_base`, while attempt numbers keep counting up.
ALTER TABLE deliveries ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;

-- Listing: a tenant's deliveries newest first; an event's deliveries.
CREATE INDEX deliveries_tenant ON deliveries (tenant_id, id);
CREATE INDEX deliveries_destination ON deliveries (destination_id, id);
CREATE INDEX tenants_id ON tenants (id);
-- Retention: settled deliveries by age.
CREATE INDEX deliveries_retention ON deliveries (updated_at) WHERE status IN ('delivered', 'cancelled');
CREATE INDEX events_created ON events (created_at);

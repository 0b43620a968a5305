-- A tenant's API keys (docs/api.md "Tenants' lifecycle"): several per tenant, each stored as
-- its SHA-256 hash, looked up on every request by that hash (Store.keyByHash). The tenants'
-- keys so far (`tenants.api_key_hash`, no longer read) become their first keys, with ids
-- `key_` + the tenant id's ULID and no prefix. The system tenant's placeholder
-- (`none:<id>`, alerts.ts) is no key and is not carried over.
CREATE TABLE tenant_keys (
  id           TEXT COLLATE "C" PRIMARY KEY,
  tenant_id    TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
  key_hash     TEXT NOT NULL UNIQUE,
  prefix       TEXT,
  created_at   BIGINT NOT NULL,
  last_used_at BIGINT
);
CREATE INDEX tenant_keys_tenant ON tenant_keys (tenant_id, id);

INSERT INTO tenant_keys (id, tenant_id, key_hash, prefix, created_at)
  SELECT 'key_' || substr(id, strpos(id, '_') + 1), id, api_key_hash, NULL, created_at
  FROM tenants WHERE api_key_hash NOT LIKE 'none:%';

-- A deleted tenant is kept (its events and deliveries point at it), found by no read.
ALTER TABLE tenants ADD COLUMN deleted_at BIGINT;

-- The event log (GET /v1/events): a tenant's events newest first.
CREATE INDEX events_tenant ON events (tenant_id, id);

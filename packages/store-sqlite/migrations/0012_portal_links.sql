-- Portal links (docs/api.md "Portal links"): a tenant's short-lived sign-in links for its
-- customers. The token is stored as its SHA-256 hash only, read by that hash on every request
-- (Store.portalLinkByHash); revoking a link deletes its row. `destination_ids` (a JSON array;
-- NULL: all the tenant's destinations) and `branding` (a JSON object; NULL: none) are JSON text.
CREATE TABLE portal_links (
  id              TEXT PRIMARY KEY,
  tenant_id       TEXT NOT NULL REFERENCES tenants (id),
  token_hash      TEXT NOT NULL UNIQUE,
  access          TEXT NOT NULL CHECK (access IN ('read', 'manage')),
  destination_ids TEXT,
  branding        TEXT,
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX portal_links_tenant ON portal_links (tenant_id, id);

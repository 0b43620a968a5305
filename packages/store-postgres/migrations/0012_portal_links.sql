-- Portal links (docs/api.md "Portal links"): a tenant's short-lived sign-in links for its
-- customers. The token is stored as its SHA-256 hash only, read by that hash on every request
-- (Store.portalLinkByHash); revoking a link deletes its row. `destination_ids` (a JSON array;
-- NULL: all the tenant's destinations) and `branding` (a JSON object; NULL: none) are JSON
-- text, as SQLite keeps them.
CREATE TABLE portal_links (
  id              TEXT COLLATE "C" PRIMARY KEY,
  tenant_id       TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
  token_hash      TEXT NOT NULL UNIQUE,
  access          TEXT NOT NULL CHECK (access IN ('read', 'manage')),
  destination_ids TEXT,
  branding        TEXT,
  created_at      BIGINT NOT NULL,
  expires_at      BIGINT NOT NULL
);
CREATE INDEX portal_links_tenant ON portal_links (tenant_id, id);

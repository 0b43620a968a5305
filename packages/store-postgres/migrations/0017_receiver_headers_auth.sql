-- What a receiver wants besides the URL (docs/api.md "Custom headers and credentials"):
-- headers sent on every attempt; the credential, its secret field sealed like the signing
-- secrets (docs/adr/0015). NULL: no credential.
ALTER TABLE destinations ADD COLUMN headers JSONB NOT NULL DEFAULT '{}';
ALTER TABLE destinations ADD COLUMN auth JSONB;

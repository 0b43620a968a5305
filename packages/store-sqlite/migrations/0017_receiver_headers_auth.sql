-- What a receiver wants besides the URL (docs/api.md "Custom headers and credentials"):
-- headers sent on every attempt, as a JSON object; the credential as JSON, its secret field
-- sealed like the signing secrets (docs/adr/0015). NULL: no credential.
ALTER TABLE destinations ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';
ALTER TABLE destinations ADD COLUMN auth TEXT;

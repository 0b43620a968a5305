-- Mutual TLS (docs/api.md "Mutual TLS"): a client certificate and its key as JSON, the key
-- sealed like the signing secrets (docs/adr/0015), and a private CA. NULL: none.
ALTER TABLE destinations ADD COLUMN tls TEXT;

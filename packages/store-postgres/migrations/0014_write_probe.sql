-- Readiness's probe write while the disk is full (@sluice/store disk-full.ts): each probe
-- truncates the table (new, empty files) and writes a row of a mebibyte (PROBE_BYTES) into
-- it, in one transaction, so the row needs room of its own on the disk; it is never read.
CREATE TABLE write_probe (filler BYTEA NOT NULL);

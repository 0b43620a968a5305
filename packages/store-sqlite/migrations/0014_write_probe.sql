-- Readiness's probe write while the disk is full (@sluice/store disk-full.ts): each probe
-- replaces the row with one of a mebibyte (PROBE_BYTES), in one transaction; it is never
-- read.
CREATE TABLE write_probe (filler BLOB NOT NULL);

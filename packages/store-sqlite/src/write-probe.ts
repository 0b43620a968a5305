/**
 * The probe write of readiness while the disk is full (`DiskFull`, @sluice/store
 * disk-full.ts): replaces `write_probe`'s row (migration 0014) with one of `PROBE_BYTES` in
 * one transaction, which fails as an event's write would where the disk has no room for it.
 */

import { PROBE_BYTES } from '@sluice/store';
import type { Sql } from './lists.ts';

export function probeWrite(db: Sql): void {
  db.tx(() => {
    db.sql('DELETE FROM write_probe').run();
    db.sql('INSERT INTO write_probe (filler) VALUES (randomblob(?))').run(PROBE_BYTES);
  });
}

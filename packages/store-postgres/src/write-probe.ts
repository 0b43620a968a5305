/**
 * The probe write of readiness while the disk is full (`DiskFull`, @sluice/store
 * disk-full.ts): in one transaction, truncates `write_probe` (migration 0014), which gives
 * it new, empty files, and writes a row of `PROBE_BYTES` of random bytes into it, so the
 * row needs room of its own on the disk (random: compression cannot make it smaller). Where
 * there is none, it fails as an event's write does: 53100 `disk_full`, "could not extend file".
 */

import { randomBytes } from 'node:crypto';
import { PROBE_BYTES } from '@sluice/store';
import type { Db } from './db.ts';

export async function probeWrite(db: Db): Promise<void> {
  await db.tx(async (q) => {
    await q.query('TRUNCATE write_probe');
    await q.query('INSERT INTO write_probe (filler) VALUES ($1)', [randomBytes(PROBE_BYTES)]);
  });
}

/**
 * Sealing the signing secrets at start (docs/operations.md "The encryption key"): every
 * secret not yet sealed with the keyring's first key — stored before encryption, or sealed
 * with a key since rotated out — is sealed with it, under the migration lock, so starting
 * services seal each row once. Idempotent: a start with nothing to seal changes nothing.
 *
 * When plain secrets were sealed, `VACUUM FULL destinations` rewrites the table, so the
 * plain copies left in dead tuples are not in the table's files any more. VACUUM keeps the
 * row versions a snapshot still open in this database may see, so it first waits (at most
 * `SCRUB_WAIT_MS`) until every snapshot older than the sealing commit has ended. What it
 * cannot reach: WAL segments written before (until recycled, and any archived), backups,
 * and the old files' blocks the filesystem freed.
 */

import { isSealed, isSealedWithCurrent, type Keyring, openSecret, sealSecret } from '@sluice/core';
import type { DestinationSecret } from '@sluice/store';
import type { Db } from './db.ts';
import { underMigrationLock } from './migrate.ts';

export interface SealResult {
  /** Destinations whose secrets were sealed (again). */
  sealed: number;
  /** Of those, how many held a secret in the clear. */
  plain: number;
  /** False when a snapshot from before the sealing outlived the wait: run the VACUUM again. */
  scrubbed: boolean;
}

/** How long the scrub waits for the snapshots older than the sealing to end. */
const SCRUB_WAIT_MS = 10_000;

export async function sealSecrets(db: Db, keyring: Keyring, schema: string | undefined): Promise<SealResult> {
  const current = `enc:v1:${keyring.keys[0].id}:`;
  const result = await underMigrationLock(db, schema, async (q) => {
    const rows = await q.query(
      `SELECT id, secrets FROM destinations
       WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(secrets) s WHERE NOT starts_with(s->>'secret', $1))
       FOR UPDATE`,
      [current],
    );
    let plain = 0;
    for (const row of rows) {
      const secrets = row.secrets as DestinationSecret[];
      if (secrets.some((s) => !isSealed(s.secret))) plain++;
      const next = secrets.map((s) => ({
        secret: isSealedWithCurrent(keyring, s.secret)
          ? s.secret
          : sealSecret(keyring, openSecret(keyring, s.secret)),
        expiresAt: s.expiresAt,
      }));
      await q.query('UPDATE destinations SET secrets = $2 WHERE id = $1', [row.id, JSON.stringify(next)]);
    }
    const [xid] = plain > 0 ? await q.query('SELECT (txid_current() % 4294967296)::text AS x') : [];
    return { sealed: rows.length, plain, xid: xid?.x as string | undefined };
  });
  const { xid, ...counts } = result;
  if (xid === undefined) return { ...counts, scrubbed: true };
  const scrubbed = await untilOlderSnapshotsEnd(db, xid);
  await db.query('VACUUM FULL destinations');
  return { ...counts, scrubbed };
}

/** Whether every other session of this database let go of its snapshots from before `xid`. */
async function untilOlderSnapshotsEnd(db: Db, xid: string): Promise<boolean> {
  const deadline = Date.now() + SCRUB_WAIT_MS;
  for (;;) {
    const [row] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND backend_xmin IS NOT NULL AND age(backend_xmin) >= age($1::text::xid)`,
      [xid],
    );
    if (row?.n === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

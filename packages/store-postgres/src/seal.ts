/**
 * Sealing the signing secrets (and the credentials' secrets, after a rotation) at start (docs/operations.md "The encryption key"): every
 * secret not yet sealed with the keyring's first key — stored before encryption, or sealed
 * with a key since rotated out — is sealed with it, under the migration lock, so starting
 * services seal each row once. Idempotent: a start with nothing to seal changes nothing.
 *
 * When plain secrets were sealed, `VACUUM FULL destinations` rewrites the table, so the
 * plain copies left in dead tuples are not in the table's files any more. VACUUM keeps the
 * row versions a snapshot still open in this database may see, so it first waits until every
 * snapshot and transaction older than the sealing commit has ended, and rewrites again while
 * Postgres reports row versions it could not remove yet (`scrub`; at most `SCRUB_WAIT_MS` in
 * all). What it
 * cannot reach: WAL segments written before (until recycled, and any archived), backups,
 * and the old files' blocks the filesystem freed.
 *
 * The sealing and the scrub run under one session lock of the schema (`SCRUB_LOCK`), so a
 * service starting beside the one that seals opens its store only once the table is
 * rewritten: no service of a deployment is ready while a plain copy is still in the files.
 * The lock is polled with `pg_try_advisory_lock`, not waited for in one statement: a
 * statement waiting on a lock holds a snapshot, and the scrub would wait for that snapshot.
 */

import {
  type DestinationAuth,
  type DestinationTls,
  isSealed,
  isSealedWithCurrent,
  type Keyring,
  openSecret,
  resealedAuth,
  resealedTls,
  sealSecret,
} from '@sluice/core';
import type { DestinationSecret } from '@sluice/store';
import type pg from 'pg';
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
/** The session lock's first key; the second is the schema's, as the migration lock's. */
const SCRUB_LOCK = 0x51_1c_e1;
const LOCK_KEY = "$1, hashtext(coalesce($2, current_schema(), ''))";

export async function sealSecrets(db: Db, keyring: Keyring, schema: string | undefined): Promise<SealResult> {
  const holder = await db.pool.connect();
  const key = [SCRUB_LOCK, schema ?? null];
  let broken: Error | undefined;
  try {
    for (;;) {
      const { rows } = await holder.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_lock(${LOCK_KEY}) AS locked`,
        key,
      );
      if (rows[0]?.locked) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return await sealAndScrub(db, holder, keyring, schema);
  } finally {
    // Unlocking a lock not held only warns; a connection that failed to unlock may still
    // hold it, so it is not handed back to the pool.
    await holder.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, key).catch((err: unknown) => {
      broken = err instanceof Error ? err : new Error(String(err));
    });
    holder.release(broken);
  }
}

async function sealAndScrub(
  db: Db,
  holder: pg.PoolClient,
  keyring: Keyring,
  schema: string | undefined,
): Promise<SealResult> {
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
    // A credential's secret is sealed from its first write: after a rotation, sealed again.
    const credentials = await q.query(
      `SELECT id, auth FROM destinations WHERE auth IS NOT NULL
         AND NOT starts_with(coalesce(auth->>'token', auth->>'password', auth->>'value', auth->>'clientSecret'), $1)
       FOR UPDATE`,
      [current],
    );
    for (const row of credentials) {
      const next = resealedAuth(row.auth as DestinationAuth, keyring);
      if (next !== undefined)
        await q.query('UPDATE destinations SET auth = $2 WHERE id = $1', [row.id, JSON.stringify(next)]);
    }
    // A client key likewise (docs/api.md "Mutual TLS").
    const keys = await q.query(
      `SELECT id, tls FROM destinations WHERE tls ? 'clientKey'
         AND NOT starts_with(tls->>'clientKey', $1) FOR UPDATE`,
      [current],
    );
    for (const row of keys) {
      const next = resealedTls(row.tls as DestinationTls, keyring);
      if (next !== undefined)
        await q.query('UPDATE destinations SET tls = $2 WHERE id = $1', [row.id, JSON.stringify(next)]);
    }
    const [xid] = plain > 0 ? await q.query('SELECT (txid_current() % 4294967296)::text AS x') : [];
    return {
      sealed: rows.length + credentials.length + keys.length,
      plain,
      xid: xid?.x as string | undefined,
    };
  });
  const { xid, ...counts } = result;
  if (xid === undefined) return { ...counts, scrubbed: true };
  return { ...counts, scrubbed: await scrub(db, holder, xid) };
}

/**
 * `VACUUM (FULL, VERBOSE) destinations` once the snapshots older than the sealing ended,
 * again while Postgres reports dead row versions it could not remove yet (a transaction that
 * began before the sealing was still running as the rewrite started), within SCRUB_WAIT_MS.
 * The count is read from the rewrite's report (its detail, "N dead row versions cannot be
 * removed yet"); a server whose messages are not in English gives no count, and one rewrite.
 */
async function scrub(db: Db, holder: pg.PoolClient, xid: string): Promise<boolean> {
  const deadline = Date.now() + SCRUB_WAIT_MS;
  let kept: number | null = null;
  const onNotice = (notice: { detail?: string | undefined }) => {
    const m = /^(\d+) dead row versions cannot be removed yet/.exec(notice.detail ?? '');
    if (m) kept = Number(m[1]);
  };
  holder.on('notice', onNotice);
  try {
    for (;;) {
      const waited = await untilOlderSnapshotsEnd(db, xid, deadline);
      kept = null;
      await holder.query('VACUUM (FULL, VERBOSE) destinations');
      if (kept === 0) return true;
      if (kept === null) return waited;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    holder.off('notice', onNotice);
  }
}

/**
 * Whether every other session of this database let go of its snapshots and transactions from
 * before `xid` by `deadline`.
 */
async function untilOlderSnapshotsEnd(db: Db, xid: string, deadline: number): Promise<boolean> {
  for (;;) {
    const [row] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND ((backend_xmin IS NOT NULL AND age(backend_xmin) >= age($1::text::xid))
           OR (backend_xid IS NOT NULL AND age(backend_xid) >= age($1::text::xid)))`,
      [xid],
    );
    if (row?.n === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

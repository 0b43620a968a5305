/**
 * Sealing the signing secrets (and the credentials' secrets, after a rotation) at start (docs/operations.md "The encryption key"): every
 * secret not yet sealed with the keyring's first key — stored before encryption, or sealed
 * with a key since rotated out — is sealed with it, in one `BEGIN IMMEDIATE` transaction, so
 * two processes opening the file seal each row once. Idempotent: a start with nothing to seal
 * changes nothing.
 *
 * When plain secrets were sealed, no plain copy may stay in the file: `secure_delete` zeroes
 * what the rewrite frees, `VACUUM` rebuilds the file with no free pages, and a
 * `wal_checkpoint(TRUNCATE)` moves the rebuilt pages into it and empties the WAL, which still
 * held the rows' earlier pages. What it cannot reach: copies of the file (backups) and the
 * blocks the filesystem freed.
 */

import type { DatabaseSync } from 'node:sqlite';
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

export interface SealResult {
  /** Destinations whose secrets were sealed (again). */
  sealed: number;
  /** Of those, how many held a secret in the clear. */
  plain: number;
}

export function sealSecrets(db: DatabaseSync, keyring: Keyring): SealResult {
  const current = `enc:v1:${keyring.keys[0].id}:`;
  db.exec('PRAGMA secure_delete = ON');
  let result: SealResult;
  db.exec('BEGIN IMMEDIATE');
  try {
    const rows = db
      .prepare(
        `SELECT id, secrets FROM destinations WHERE EXISTS (
           SELECT 1 FROM json_each(destinations.secrets) s
           WHERE substr(json_extract(s.value, '$.secret'), 1, length(?1)) <> ?1)`,
      )
      .all(current);
    const update = db.prepare('UPDATE destinations SET secrets = ? WHERE id = ?');
    let plain = 0;
    for (const row of rows) {
      const secrets = JSON.parse(row.secrets as string) as DestinationSecret[];
      if (secrets.some((s) => !isSealed(s.secret))) plain++;
      const next = secrets.map((s) => ({
        secret: isSealedWithCurrent(keyring, s.secret)
          ? s.secret
          : sealSecret(keyring, openSecret(keyring, s.secret)),
        expiresAt: s.expiresAt,
      }));
      update.run(JSON.stringify(next), row.id as string);
    }
    // A credential's secret is sealed from its first write: after a rotation, sealed again.
    const credentials = db
      .prepare(
        `SELECT id, auth FROM destinations WHERE auth IS NOT NULL AND substr(coalesce(
           json_extract(auth, '$.token'), json_extract(auth, '$.password'), json_extract(auth, '$.value'),
           json_extract(auth, '$.clientSecret')),
           1, length(?1)) <> ?1`,
      )
      .all(current);
    const updateAuth = db.prepare('UPDATE destinations SET auth = ? WHERE id = ?');
    for (const row of credentials) {
      const next = resealedAuth(JSON.parse(row.auth as string) as DestinationAuth, keyring);
      if (next !== undefined) updateAuth.run(JSON.stringify(next), row.id as string);
    }
    // A client key likewise (docs/api.md "Mutual TLS").
    const keys = db
      .prepare(
        `SELECT id, tls FROM destinations WHERE json_extract(tls, '$.clientKey') IS NOT NULL
           AND substr(json_extract(tls, '$.clientKey'), 1, length(?1)) <> ?1`,
      )
      .all(current);
    const updateTls = db.prepare('UPDATE destinations SET tls = ? WHERE id = ?');
    for (const row of keys) {
      const next = resealedTls(JSON.parse(row.tls as string) as DestinationTls, keyring);
      if (next !== undefined) updateTls.run(JSON.stringify(next), row.id as string);
    }
    db.exec('COMMIT');
    result = { sealed: rows.length + credentials.length + keys.length, plain };
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  } finally {
    db.exec('PRAGMA secure_delete = OFF');
  }
  if (result.plain > 0) {
    db.exec('VACUUM');
    const done = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number } | undefined;
    if (done !== undefined && done.busy !== 0)
      throw new Error(
        'sealing secrets: the WAL could not be emptied (another connection is reading); start again',
      );
  }
  return result;
}

/**
 * Sealing at open (seal.ts): a schema written before encryption — secrets in the clear —
 * comes out of its first open with every secret sealed and the table rewritten (`VACUUM
 * FULL`), so the dead tuples holding the plain secrets are not in its file; a rotated keyring
 * seals again with its first key. The file's bytes are read where this machine can read the
 * server's data directory (a local test server); the rewrite is checked everywhere.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { generateKeyText, generateSecret, newId, parseKeyring } from '@sluice/core';
import { newDestination } from '@sluice/store/conformance';
import { adminQuery, dropSchema, freshSchema, TEST_DATABASE_URL, withPostgres } from '@sluice/testing';
import pg from 'pg';
import { PostgresStore } from './postgres-store.ts';

const T0 = 1_700_000_000_000;

/** The table's file after a checkpoint, as latin1 text; undefined when this machine cannot read it. */
async function tableBytes(schema: string): Promise<{ path: string; bytes: string | undefined }> {
  await adminQuery('CHECKPOINT');
  const { rows } = await adminQuery(
    "SELECT current_setting('data_directory') AS dir, pg_relation_filepath($1) AS path",
    [`${schema}.destinations`],
  );
  const { dir, path } = rows[0] as { dir: string; path: string };
  try {
    return { path, bytes: readFileSync(join(dir, path)).toString('latin1') };
  } catch {
    return { path, bytes: undefined };
  }
}

/**
 * A schema with one destination whose secret is in the clear, as a release before encryption
 * wrote it, and the keyring of the next open.
 */
async function onePlainSecret(schema: string) {
  const keyring = parseKeyring(generateKeyText());
  const before = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema });
  const tenant = { id: newId('ten'), name: 'a', createdAt: T0 };
  const secret = generateSecret();
  try {
    await before.createTenant(tenant, 'hash');
    const d = newDestination(tenant.id, { secrets: [{ secret, expiresAt: null }] });
    await before.createDestination(d, T0);
    await before.db.query('UPDATE destinations SET secrets = $2 WHERE id = $1', [
      d.id,
      JSON.stringify([{ secret, expiresAt: null }]),
    ]);
  } finally {
    await before.close();
  }
  return { keyring, secret };
}

/** The table's file holds no plain copy of `secret` (where this machine can read it). */
async function assertNoPlainCopy(schema: string, secret: string): Promise<void> {
  const { bytes } = await tableBytes(schema);
  if (bytes !== undefined)
    assert.ok(!bytes.includes(secret.slice('whsec_'.length)), 'a plain secret is left');
}

await withPostgres(() => {
  describe('sealing secrets at open (Postgres)', () => {
    let schema: string;
    beforeEach(() => {
      schema = freshSchema();
    });
    afterEach(() => dropSchema(schema));

    it('seals the plain secrets of an older schema and rewrites the table', async () => {
      const keyText = generateKeyText();
      const keyring = parseKeyring(keyText);
      const before = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema });
      const tenant = { id: newId('ten'), name: 'a', createdAt: T0 };
      const plain = Array.from({ length: 20 }, () => generateSecret());
      const ids: string[] = [];
      try {
        await before.createTenant(tenant, 'hash');
        for (const secret of plain) {
          const d = newDestination(tenant.id, { secrets: [{ secret, expiresAt: null }] });
          await before.createDestination(d, T0);
          ids.push(d.id);
        }
        // As a release before encryption wrote them: each secret in the clear.
        for (const [i, id] of ids.entries())
          await before.db.query('UPDATE destinations SET secrets = $2 WHERE id = $1', [
            id,
            JSON.stringify([{ secret: plain[i], expiresAt: null }]),
          ]);
      } finally {
        await before.close();
      }
      const old = await tableBytes(schema);
      if (old.bytes !== undefined)
        assert.ok(
          plain.every((s) => old.bytes?.includes(s)),
          'starts in the clear',
        );

      const after = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema });
      try {
        for (const [i, id] of ids.entries()) {
          const [row] = await after.db.query('SELECT secrets::text AS s FROM destinations WHERE id = $1', [
            id,
          ]);
          const raw = row?.s as string;
          assert.match(raw, /"enc:v1:/);
          assert.ok(!raw.includes(plain[i] as string));
          assert.deepEqual((await after.getDestination(id))?.secrets, [
            { secret: plain[i], expiresAt: null },
          ]);
        }
      } finally {
        await after.close();
      }
      const now = await tableBytes(schema);
      assert.notEqual(now.path, old.path, 'VACUUM FULL gave the table a new file');
      if (now.bytes !== undefined)
        for (const s of plain)
          assert.ok(!now.bytes.includes(s.slice('whsec_'.length)), 'a plain secret is left');

      // Rotation: a new key first, the old one after; the next open seals again with the new one.
      const rotated = parseKeyring(`${generateKeyText()},${keyText}`);
      const again = await PostgresStore.open(TEST_DATABASE_URL, { keyring: rotated, schema });
      try {
        const [row] = await again.db.query('SELECT secrets->0->>$2 AS s FROM destinations WHERE id = $1', [
          ids[0],
          'secret',
        ]);
        assert.ok(String(row?.s).startsWith(`enc:v1:${rotated.keys[0].id}:`));
        assert.deepEqual((await again.getDestination(ids[0] as string))?.secrets, [
          { secret: plain[0], expiresAt: null },
        ]);
      } finally {
        await again.close();
      }
      // Sealed again, not plain: no rewrite this time.
      assert.equal((await tableBytes(schema)).path, now.path);
      // The old key alone no longer opens them: it does not start.
      await assert.rejects(PostgresStore.open(TEST_DATABASE_URL, { keyring, schema }), {
        code: 'SLUICE_KEY_UNKNOWN',
      });
    });

    it('waits for a snapshot older than the sealing to end before the rewrite', async () => {
      const { keyring, secret } = await onePlainSecret(schema);
      // Another session holds a snapshot from before the sealing: the plain row stays visible to it.
      const held = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await held.connect();
      try {
        await held.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await held.query('SELECT 1'); // a snapshot, and no lock on the table: VACUUM FULL would not wait for it
        const opening = PostgresStore.open(TEST_DATABASE_URL, { keyring, schema });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await held.query('COMMIT');
        await (await opening).close();
      } finally {
        await held.end();
      }
      await assertNoPlainCopy(schema, secret);
    });

    it('waits for a transaction older than the sealing, holding no snapshot, to end before the rewrite', async () => {
      const { keyring, secret } = await onePlainSecret(schema);
      // Another session holds a snapshot from before the sealing: the plain row stays visible to it.
      const held = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await held.connect();
      try {
        // Read committed, idle between statements: no snapshot, but an xid (it wrote), which
        // keeps the row versions deleted after it began.
        await held.query('BEGIN');
        await held.query('CREATE TEMP TABLE held_xid (a int)');
        const opening = PostgresStore.open(TEST_DATABASE_URL, { keyring, schema });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await held.query('COMMIT');
        await (await opening).close();
      } finally {
        await held.end();
      }
      await assertNoPlainCopy(schema, secret);
    });

    it('a store opened beside the one that seals opens only once the table is rewritten', async () => {
      const { keyring, secret } = await onePlainSecret(schema);
      // A snapshot from before the sealing holds the sealer's scrub back.
      const held = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await held.connect();
      const opened: string[] = [];
      try {
        await held.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await held.query('SELECT 1');
        const sealer = PostgresStore.open(TEST_DATABASE_URL, { keyring, schema }).then((s) => {
          opened.push('sealer');
          return s;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        const beside = PostgresStore.open(TEST_DATABASE_URL, { keyring, schema }).then((s) => {
          opened.push('beside');
          return s;
        });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        assert.deepEqual(opened, [], 'neither is open while the plain copy is in the files');
        await held.query('COMMIT');
        await Promise.all([(await sealer).close(), (await beside).close()]);
      } finally {
        await held.end();
      }
      await assertNoPlainCopy(schema, secret);
    });
  });
});

/**
 * Signing secrets at rest (docs/operations.md "The encryption key"), in the shape under test:
 *
 * - the API shows a secret only in the create and rotate answers and from
 *   `GET /v1/destinations/:id/secret` (the current one and the rotated-out ones still
 *   signing), never in a read, a list or a patch answer; another tenant gets a 404;
 * - the store holds each secret sealed (`enc:v1:<key id>:…`), and the database's files hold
 *   none in the clear: the SQLite file and its WAL, or the Postgres table's file after a
 *   checkpoint (read where this machine can read the server's data directory);
 * - a database of plain secrets, as a release before encryption left it, is sealed by the
 *   next start, its files rewritten so no plain copy is left, and deliveries are still
 *   signed with the same secrets.
 */

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Sluice } from '@sluice/client';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { type ApiBox, fileBox, headersOf, rejectsWith } from './helpers/client.ts';
import { SHAPE } from './helpers/shape.ts';

const get = fileBox();

/** The secrets column as the database holds it. */
async function rawSecrets(b: ApiBox, id: string): Promise<{ secret: string; expiresAt: number | null }[]> {
  const [row] = await b.query<{ secrets: unknown }>('SELECT secrets FROM destinations WHERE id = ?', [id]);
  // Text in SQLite, JSON in Postgres.
  return (typeof row?.secrets === 'string' ? JSON.parse(row.secrets) : row?.secrets) as {
    secret: string;
    expiresAt: number | null;
  }[];
}

/**
 * The bytes that hold the destinations table, as latin1 text: the SQLite file and its WAL,
 * or (after a checkpoint) the Postgres table's file; undefined when the server's data
 * directory is not readable from here.
 */
async function storedBytes(b: ApiBox): Promise<string | undefined> {
  const env = b.childEnv();
  if (SHAPE === 'single') {
    const file = join(env.SLUICE_DATA_DIR as string, 'sluice.db');
    const parts = [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f));
    return Buffer.concat(parts).toString('latin1');
  }
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    await client.query('CHECKPOINT');
    const { rows } = await client.query(
      "SELECT current_setting('data_directory') AS dir, pg_relation_filepath('destinations') AS path",
    );
    const { dir, path } = rows[0] as { dir: string; path: string };
    return readFileSync(join(dir, path)).toString('latin1');
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}

/** The key bytes of a `whsec_` secret: what must not appear anywhere. */
const keyPart = (secret: string) => secret.slice('whsec_'.length);

async function deliverOne(api: Sluice, dst: string, name: string, n: number) {
  const rcv = get().rcv;
  const sent = await api.events.send({ type: 'secrets.test', payload: { n }, destinationId: dst });
  await rcv.waitFor(() => rcv.deliveredIds(rcv.path(name)).has(sent.id), 15_000, `event ${n} at ${name}`);
  const arrival = rcv.arrivals(rcv.path(name)).find((a) => a.headers['webhook-id'] === sent.id);
  assert.ok(arrival);
  return arrival;
}

describe('signing secrets', () => {
  it('shown at create, at rotate and by GET .../secret only; never in a read, a list or a patch', async () => {
    const { api } = await get().tenant('shown');
    const created = await api.destinations.create({
      url: get().rcv.url('shown'),
      rateLimit: { limit: 10, period: 'second' },
    });
    const secret = created.secret;
    assert.match(secret, /^whsec_/);
    const read = await api.destinations.get(created.id);
    assert.equal('secret' in read, false);
    assert.ok(!JSON.stringify(read).includes(keyPart(secret)), 'not in a read');
    const list = await api.destinations.list({ limit: 100 });
    assert.ok(!JSON.stringify(list).includes(keyPart(secret)), 'not in a list');
    const patched = await api.destinations.update(created.id, { name: 'renamed' });
    assert.ok(!JSON.stringify(patched).includes(keyPart(secret)), 'not in a patch answer');

    assert.deepEqual(await api.destinations.secret(created.id), { secret, previous: [] });
    const rotated = await api.destinations.rotateSecret(created.id);
    assert.deepEqual(await api.destinations.secret(created.id), {
      secret: rotated.secret,
      previous: [{ secret, expiresAt: rotated.previousSecretExpiresAt }],
    });
    assert.equal((await get().admin.destinations.secret(created.id)).secret, rotated.secret, 'the admin too');
    const other = await get().tenant('other');
    await rejectsWith(other.api.destinations.secret(created.id), 404, 'not_found');
  });

  it('stored sealed: the row holds no secret in the clear, nor do the database files', async () => {
    const { api } = await get().tenant('sealed');
    const secrets: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const d = await api.destinations.create({
        url: get().rcv.url(`sealed-${i}`),
        rateLimit: { limit: 10, period: 'second' },
      });
      ids.push(d.id);
      secrets.push(d.secret, (await api.destinations.rotateSecret(d.id)).secret);
    }
    for (const id of ids) {
      const stored = await rawSecrets(get(), id);
      assert.equal(stored.length, 2);
      for (const s of stored) assert.match(s.secret, /^enc:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
    }
    const bytes = await storedBytes(get());
    if (bytes === undefined) return; // the server's files are elsewhere: the rows were checked
    assert.ok(bytes.includes('enc:v1:'), 'the bytes searched hold the table');
    for (const s of secrets) assert.ok(!bytes.includes(keyPart(s)), 'a secret in the clear in the files');
  });

  it('plain secrets from before encryption: sealed at the next start, no plain copy left; still signing', {
    timeout: 60_000,
  }, async () => {
    const { api } = await get().tenant('upgraded');
    const plain: { id: string; secret: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const d = await api.destinations.create({
        url: get().rcv.url(`upgraded-${i}`),
        rateLimit: { limit: 10, period: 'second' },
      });
      plain.push({ id: d.id, secret: d.secret });
    }
    // As a release before encryption left them, written while nothing has the store open.
    await get().restart(async () => {
      for (const { id, secret } of plain)
        await get().query('UPDATE destinations SET secrets = ? WHERE id = ?', [
          JSON.stringify([{ secret, expiresAt: null }]),
          id,
        ]);
      const before = await storedBytes(get());
      if (before !== undefined)
        assert.ok(
          plain.every(({ secret }) => before.includes(secret)),
          'the test starts from files with the secrets in the clear',
        );
    });
    for (const { id, secret } of plain) {
      const [stored] = await rawSecrets(get(), id);
      assert.match(stored?.secret ?? '', /^enc:v1:/, 'sealed by the start');
      assert.deepEqual(await api.destinations.secret(id), { secret, previous: [] });
    }
    const after = await storedBytes(get());
    if (after !== undefined)
      for (const { secret } of plain) assert.ok(!after.includes(keyPart(secret)), 'a plain copy is left');

    const first = plain[0] as { id: string; secret: string };
    const arrival = await deliverOne(api, first.id, 'upgraded-0', 1);
    assert.doesNotThrow(() => new Webhook(first.secret).verify(arrival.body, headersOf(arrival)));
  });
});

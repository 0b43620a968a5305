/**
 * Secret rotation, checked at the receiver with the `standardwebhooks` package: during the
 * overlap `webhook-signature` carries one signature per live secret and both the old and
 * the new secret verify; after it, only the new one does.
 *
 * "After the overlap" without waiting 24 h, three ways:
 * - the real expiry: the box is stopped, the rotated-out secret's `expiresAt` in the store
 *   is moved to the past (the only write this file makes to the store, done while no
 *   process has it open), and the box is started again on the same file: the signer must
 *   drop the expired secret by itself, and a later rotation must not bring it back;
 * - `PATCH secret`, which replaces every secret at once;
 * - a second rotation inside the first overlap, which keeps both earlier secrets signing.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Sluice } from '@sluice/client';
import { Webhook } from 'standardwebhooks';
import { fileBox, headersOf } from './helpers/client.ts';
import type { Arrival } from './helpers/receiver.ts';

const get = fileBox();

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Sends one event to `dst` and returns its arrival at `name`'s path. */
async function deliverOne(api: Sluice, dst: string, name: string, n: number): Promise<Arrival> {
  const rcv = get().rcv;
  const sent = await api.events.send({ type: 'rotation.test', payload: { n }, destinationId: dst });
  await rcv.waitFor(() => rcv.deliveredIds(rcv.path(name)).has(sent.id), 15_000, `event ${n} at ${name}`);
  return rcv.arrivals(rcv.path(name)).find((a) => a.headers['webhook-id'] === sent.id)!;
}

function signatures(a: Arrival): string[] {
  return String(a.headers['webhook-signature']).split(' ');
}

function verifies(secret: string, a: Arrival): boolean {
  try {
    new Webhook(secret).verify(a.body, headersOf(a));
    return true;
  } catch {
    return false;
  }
}

function assertVerifies(a: Arrival, good: string[], bad: string[]): void {
  for (const [i, s] of good.entries()) assert.ok(verifies(s, a), `secret #${i} should verify`);
  for (const [i, s] of bad.entries()) assert.ok(!verifies(s, a), `secret #${i} should not verify`);
}

async function destination(name: string, secret: string) {
  const { api } = await get().tenant(name);
  const d = await api.destinations.create({
    url: get().rcv.url(name),
    rateLimit: { limit: 50, period: 'second' },
    secret,
  });
  return { api, dst: d.id };
}

describe('secret rotation', () => {
  it('during the overlap both secrets verify; after it only the new one', { timeout: 60_000 }, async () => {
    const s1 = newSecret();
    const { api, dst } = await destination('expiry', s1);
    const e1 = await deliverOne(api, dst, 'expiry', 1);
    assert.equal(signatures(e1).length, 1);
    assertVerifies(e1, [s1], [newSecret()]);

    const before = Date.now();
    const rotated = await api.destinations.rotateSecret(dst);
    const s2 = rotated.secret;
    const expiresAt = Date.parse(rotated.previousSecretExpiresAt ?? '');
    assert.ok(
      Math.abs(expiresAt - (before + 86_400_000)) < 5_000,
      `the old secret expires in 24 h: ${rotated.previousSecretExpiresAt}`,
    );
    const e2 = await deliverOne(api, dst, 'expiry', 2);
    assert.equal(signatures(e2).length, 2, `two signatures: ${e2.headers['webhook-signature']}`);
    assertVerifies(e2, [s1, s2], [newSecret()]);

    assert.deepEqual(
      await api.destinations.secret(dst),
      { secret: s2, previous: [{ secret: s1, expiresAt: rotated.previousSecretExpiresAt }] },
      'the store keeps the old secret with its expiry',
    );

    // 24 h later: the stored expiry of s1 moved to the past, with the box stopped.
    await get().restart(async () => {
      const [row] = await get().query<{ secrets: unknown }>('SELECT secrets FROM destinations WHERE id = ?', [
        dst,
      ]);
      // Text in SQLite, JSON in Postgres.
      const stored = typeof row?.secrets === 'string' ? JSON.parse(row.secrets) : row?.secrets;
      const secrets = stored as { secret: string; expiresAt: number | null }[];
      // Each sealed (docs/operations.md "The encryption key"), its expiry beside it.
      assert.deepEqual(
        secrets.map((s) => [s.secret.startsWith('enc:v1:'), s.expiresAt]),
        [
          [true, null],
          [true, expiresAt],
        ],
      );
      const aged = secrets.map((s) => (s.expiresAt === null ? s : { ...s, expiresAt: Date.now() - 1_000 }));
      await get().query('UPDATE destinations SET secrets = ? WHERE id = ?', [JSON.stringify(aged), dst]);
    });
    const e3 = await deliverOne(api, dst, 'expiry', 3);
    assert.equal(signatures(e3).length, 1, `one signature: ${e3.headers['webhook-signature']}`);
    assertVerifies(e3, [s2], [s1]);

    // A rotation after the overlap keeps the expired secret out.
    const s3 = (await api.destinations.rotateSecret(dst)).secret;
    const e4 = await deliverOne(api, dst, 'expiry', 4);
    assert.equal(signatures(e4).length, 2);
    assertVerifies(e4, [s3, s2], [s1]);
  });

  it('a second rotation inside the overlap: all three secrets sign until theirs expire', {
    timeout: 30_000,
  }, async () => {
    const s1 = newSecret();
    const { api, dst } = await destination('twice', s1);
    const first = await api.destinations.rotateSecret(dst);
    const second = await api.destinations.rotateSecret(dst);
    assert.notEqual(second.secret, first.secret);
    assert.ok(
      Date.parse(second.previousSecretExpiresAt!) >= Date.parse(first.previousSecretExpiresAt!),
      'the second rotation gives the secret it replaces its own 24 h',
    );
    const e = await deliverOne(api, dst, 'twice', 1);
    assert.equal(signatures(e).length, 3, `three signatures: ${e.headers['webhook-signature']}`);
    assertVerifies(e, [s1, first.secret, second.secret], [newSecret()]);
  });

  it('PATCH secret replaces every secret at once: only the new one verifies', {
    timeout: 30_000,
  }, async () => {
    const s1 = newSecret();
    const { api, dst } = await destination('patched', s1);
    const s2 = (await api.destinations.rotateSecret(dst)).secret;
    const s3 = newSecret();
    const patched = await api.destinations.update(dst, { secret: s3 });
    assert.ok(!('secret' in patched), 'a PATCH answer does not show the secret');
    const e = await deliverOne(api, dst, 'patched', 1);
    assert.equal(signatures(e).length, 1, `one signature: ${e.headers['webhook-signature']}`);
    assertVerifies(e, [s3], [s1, s2]);
  });
});

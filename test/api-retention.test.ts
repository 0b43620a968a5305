/**
 * Retention (docs/design.md "The scale plan"): delivered deliveries, their attempts
 * and the events with nothing left to deliver are deleted once older than the configured
 * age, in small batches; dead and pending ones are kept. On rows made by the real flow, in
 * both shapes: while the box is stopped its rows are aged by 20 days (the only writes this
 * file makes to the store) and the engine's `Retention` runs on the box's own store — with
 * an age of 30 days (nothing is old enough), then of 14 (`SLUICE_RETENTION_DAYS`' default),
 * two rows a batch. The store conformance suite checks `deleteExpired` row by row; this
 * checks the loop over it and what the API shows after.
 *
 * Running it here rather than waiting for the service's own timer: that one runs every
 * minute (a test would wait a minute per shape).
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Sluice } from '@sluice/client';
import { parseKeyring } from '@sluice/core';
import { Retention } from '@sluice/engine';
import { encryptionKey } from '@sluice/single/encryption-key';
import type { RetentionResult, Store } from '@sluice/store';
import { PostgresStore } from '@sluice/store-postgres';
import { SqliteStore } from '@sluice/store-sqlite';
import { pino } from 'pino';
import { type ApiBox, fileBox, rejectsWith } from './helpers/client.ts';
import { waitUntil } from './helpers/sluice.ts';

const DAY = 86_400_000;
const AGE = 20 * DAY;
const get = fileBox();

/** The box's own store, opened while the box is stopped. */
async function openStore(b: ApiBox): Promise<Store & { close(): Promise<void> }> {
  const env = b.childEnv();
  // The key the box was given, or the one it keeps in its data dir.
  const given = env.SLUICE_ENCRYPTION_KEY === undefined ? undefined : parseKeyring(env.SLUICE_ENCRYPTION_KEY);
  const { keyring } = encryptionKey(env.SLUICE_DATA_DIR as string, given);
  if (env.DATABASE_URL) return PostgresStore.open(env.DATABASE_URL, { keyring, poolSize: 2 });
  return new SqliteStore(join(env.SLUICE_DATA_DIR as string, 'sluice.db'), { keyring });
}

/** Runs retention once over `store`; the totals and each batch's deliveries. */
async function retain(store: Store, retentionMs: number, batch: number) {
  const batches: RetentionResult[] = [];
  const counting = {
    deleteExpired: async (before: number, n: number) => {
      const done = await store.deleteExpired(before, n);
      batches.push(done);
      return done;
    },
  } as unknown as Store;
  const retention = new Retention({
    store: counting,
    logger: pino({ level: 'silent' }),
    clock: Date.now,
    retentionMs,
    intervalMs: 60_000,
    batch,
  });
  return { total: await retention.run(), batches };
}

describe('retention', () => {
  it('deletes delivered rows older than the age in small batches; keeps dead and pending', {
    timeout: 60_000,
  }, async () => {
    const b = get();
    const { api } = await b.tenant('retention');
    const create = (name: string, extra = {}) =>
      api.destinations.create({ url: b.rcv.url(name), rateLimit: { limit: 50, period: 'second' }, ...extra });
    const ok = await create('keep-ok');
    await b.rcv.setDefault(b.rcv.path('keep-dead'), 500);
    const dead = await create('keep-dead', { retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 } });
    const held = await create('keep-held');
    await api.destinations.pause(held.id);

    const send = (destinationIds: string[], n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) => api.events.send({ type: 'r.x', payload: { i }, destinationIds })),
      );
    const delivered = await send([ok.id], 5);
    const [died] = await send([dead.id], 1);
    const [split] = await send([ok.id, held.id], 1);
    const settled = async (c: Sluice, id: string, status: string) =>
      (await c.destinations.stats(id, { seconds: 300 }))[status as 'delivered' | 'dead'];
    await waitUntil(async () => (await settled(api, ok.id, 'delivered')) === 6, 15_000, 'six delivered');
    await waitUntil(async () => (await settled(api, dead.id, 'dead')) === 1, 15_000, 'one dead');

    let young: Awaited<ReturnType<typeof retain>> | undefined;
    let old: Awaited<ReturnType<typeof retain>> | undefined;
    await b.restart(async () => {
      await b.query('UPDATE events SET created_at = created_at - ?', [AGE]);
      await b.query('UPDATE deliveries SET created_at = created_at - ?, updated_at = updated_at - ?', [
        AGE,
        AGE,
      ]);
      await b.query('UPDATE attempts SET started_at = started_at - ?, finished_at = finished_at - ?', [
        AGE,
        AGE,
      ]);
      const store = await openStore(b);
      try {
        young = await retain(store, 30 * DAY, 2);
        old = await retain(store, 14 * DAY, 2);
      } finally {
        await store.close();
      }
    });

    assert.deepEqual(
      young?.total,
      { deliveries: 0, attempts: 0, events: 0, transitions: 0 },
      'nothing older than 30 days',
    );
    assert.deepEqual(
      old?.total,
      { deliveries: 6, attempts: 6, events: 6, transitions: 0 },
      // The dead delivery's sluice.delivery.dead is an event of the tenant too, with no
      // subscriber here: no delivery holds it.
      'the six delivered deliveries, their attempts, and the six events with nothing left (the five delivered, the dead one’s notice)',
    );
    assert.ok((old?.batches.length ?? 0) >= 4, `batches of two: ${JSON.stringify(old?.batches)}`);
    for (const batch of old?.batches ?? []) {
      assert.ok(
        batch.deliveries <= 2 && batch.events <= 2,
        `a batch of at most two: ${JSON.stringify(batch)}`,
      );
    }

    // What the API shows after: the delivered gone, the dead and the pending kept.
    for (const e of delivered) {
      await rejectsWith(api.events.get(e.id), 404, 'not_found', 'a delivered event past the age');
      await rejectsWith(api.deliveries.get(e.deliveries[0]!.id), 404, 'not_found', 'its delivery');
    }
    const kept = await api.deliveries.get(died!.deliveries[0]!.id);
    assert.equal(kept.status, 'dead');
    assert.equal(kept.attempts.length, 1, 'a dead delivery keeps its attempts');
    const rest = await api.events.get(split!.id);
    assert.deepEqual(
      rest.deliveries.map((d) => [d.destinationId, d.status]),
      [[held.id, 'pending']],
      'an event with a delivery still pending stays, without its delivered one',
    );
    assert.deepEqual(
      await api.destinations.replay(dead.id),
      { count: 1 },
      'the dead one can still be replayed',
    );
  });
});

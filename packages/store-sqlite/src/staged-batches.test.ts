import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import type { NewEvent } from '@sluice/store';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from './sqlite-store.ts';

const T0 = 1_700_000_000_000;
const keyring = newKeyring();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function open(file?: string) {
  const dir = file === undefined ? mkdtempSync(join(tmpdir(), 'sluice-staged-')) : undefined;
  const path = file ?? join(dir as string, 'sluice.db');
  const store = new SqliteStore(path, { keyring });
  cleanups.push(async () => {
    await store.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return { store, path };
}

async function tenantWithDestinations(store: SqliteStore, n: number) {
  const tenantId = newId('ten');
  await store.createTenant({ id: tenantId, name: 'Bulk', createdAt: T0 }, newId('key'));
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await store.createDestination(newDestination(tenantId), T0)).id);
  return { tenantId, ids };
}

const events = (n: number, destinationIds: string[], key?: (i: number) => string | null): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'bulk.test',
    payload: JSON.stringify({ i }),
    idempotencyKey: key?.(i) ?? null,
    destinationIds: [destinationIds[i % destinationIds.length] as string],
  }));

const count = (store: SqliteStore, sql: string): number =>
  Number(Object.values(store.db.prepare(sql).get() ?? {})[0]);
const staged = (store: SqliteStore): number =>
  count(store, 'SELECT count(*) FROM staged_events') +
  count(store, 'SELECT count(*) FROM staged_deliveries') +
  count(store, 'SELECT count(*) FROM staged_batches');

describe('a batch accepted in slices (staged-batches.ts)', () => {
  it('answers as one transaction would: every event, its deliveries pending in input order, replays', async () => {
    const { store } = await open();
    const { tenantId, ids } = await tenantWithDestinations(store, 3);
    const [first] = await store.acceptEvents(
      tenantId,
      events(1, ids, () => 'k-0'),
      T0,
    );
    const batch = events(450, ids, (i) => (i === 0 || i === 7 || i === 9 ? `k-${i === 9 ? 7 : i}` : null));
    const results = await store.acceptEvents(tenantId, batch, T0 + 1, { slices: true });
    assert.equal(results.length, 450);
    assert.deepEqual(results[0], { event: first?.event, replayed: true }, 'a key accepted before replays');
    assert.equal(results[7]?.replayed, false);
    assert.deepEqual(results[9], { event: results[7]?.event, replayed: true }, 'a key earlier in the batch');
    assert.equal(staged(store), 0, 'nothing left staged');
    assert.equal(count(store, `SELECT count(*) FROM events WHERE type = 'bulk.test'`), 1 + 448);
    for (const r of [results[1], results[200], results[449]]) {
      const got = await store.getEvent(r?.event.id as string);
      assert.equal(got?.deliveries.length, 1);
      assert.equal(got?.deliveries[0]?.status, 'pending');
      assert.equal(got?.deliveries[0]?.id, r?.event.deliveries[0]?.id);
    }
    // Claimed in acceptance order, as after one transaction.
    const claim = await store.claimDue(ids[1] as string, 500, T0 + 2);
    const expected = results
      .filter((r) => !r.replayed && r.event.deliveries[0]?.destinationId === ids[1])
      .map((r) => r.event.deliveries[0]?.id);
    assert.deepEqual(
      claim.deliveries.map((d) => d.id),
      expected,
    );
  });

  it("lets another accept commit between its slices, and that accept's key waits for the batch", async () => {
    const { store } = await open();
    const { tenantId, ids } = await tenantWithDestinations(store, 2);
    const order: string[] = [];
    const bulk = store
      .acceptEvents(
        tenantId,
        events(1_000, ids, (i) => (i === 500 ? 'shared' : null)),
        T0,
        { slices: true },
      )
      .then((r) => {
        order.push('bulk');
        return r;
      });
    const light = store.acceptEvents(tenantId, events(1, ids), T0).then(() => order.push('light'));
    const sameKey = store
      .acceptEvents(
        tenantId,
        events(1, ids, () => 'shared'),
        T0,
      )
      .then((r) => {
        order.push('same key');
        return r;
      });
    const [results] = await Promise.all([bulk, light, sameKey]);
    assert.deepEqual(order, ['light', 'bulk', 'same key'], 'the light accept did not wait for the batch');
    const [replay] = await sameKey;
    assert.deepEqual(
      replay,
      { event: results[500]?.event, replayed: true },
      'the same key replays the batch',
    );
    assert.equal(
      count(store, 'SELECT count(*) FROM events'),
      1_001,
      'the batch and the light one; the same key made none',
    );
  });

  it('a failure while staging accepts nothing and leaves nothing staged', async () => {
    const { store } = await open();
    const { tenantId, ids } = await tenantWithDestinations(store, 2);
    const pages = (name: string) => Number(Object.values(store.db.prepare(`PRAGMA ${name}`).get() ?? {})[0]);
    const limit = pages('max_page_count');
    const accepting = store.acceptEvents(
      tenantId,
      events(1_000, ids).map((e) => ({ ...e, payload: JSON.stringify({ pad: 'x'.repeat(2_000) }) })),
      T0,
      { slices: true },
    );
    // The disk fills once the batch has begun (its first slice is staged in a later turn).
    store.db.exec(`PRAGMA max_page_count = ${pages('page_count') + 50}`);
    await assert.rejects(accepting, /full/i);
    store.db.exec(`PRAGMA max_page_count = ${limit}`);
    assert.equal(count(store, 'SELECT count(*) FROM events'), 0, 'nothing accepted');
    assert.equal(staged(store), 0, 'nothing left staged');
    const after = await store.acceptEvents(tenantId, events(300, ids), T0, { slices: true });
    assert.equal(after.length, 300, 'the next batch goes in');
  });

  it('at start, a decided batch is moved, each event with its deliveries; an undecided one is dropped', async () => {
    const { store, path } = await open();
    const { tenantId, ids } = await tenantWithDestinations(store, 2);
    const [taken] = await store.acceptEvents(
      tenantId,
      events(1, ids, () => 'taken'),
      T0,
    );
    const stage = (batch: string, decided: number, n: number) => {
      store.db
        .prepare('INSERT INTO staged_batches (id, tenant_id, decided, created_at) VALUES (?, ?, ?, ?)')
        .run(batch, tenantId, decided, T0);
      for (let i = 0; i < n; i++) {
        const id = newId('evt');
        store.db
          .prepare(
            `INSERT INTO staged_events (batch_id, seq, id, tenant_id, type, payload, idempotency_key, created_at)
             VALUES (?, ?, ?, ?, 'bulk.test', '{}', ?, ?)`,
          )
          .run(batch, i, id, tenantId, i === 3 ? 'taken' : null, T0);
        for (const [seq, destinationId] of ids.entries())
          store.db
            .prepare(
              `INSERT INTO staged_deliveries (batch_id, event_seq, seq, id, event_id, destination_id, tenant_id, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(batch, i, seq, newId('dlv'), id, destinationId, tenantId, T0);
      }
    };
    stage('decided', 1, 250);
    stage('undecided', 0, 120);
    await store.close();
    const { store: again } = await open(path);
    assert.equal(staged(again), 0);
    assert.equal(
      count(again, `SELECT count(*) FROM events WHERE type = 'bulk.test'`),
      250 + 1,
      'the decided batch, whole',
    );
    assert.equal(
      count(
        again,
        `SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.type = 'bulk.test'`,
      ),
      2 * 250 + 1,
      'every event with both its deliveries (and the one taken before, with its one)',
    );
    assert.equal(
      count(again, `SELECT count(*) FROM events WHERE idempotency_key = 'taken'`),
      1,
      'a key taken meanwhile stays with the event that has it; the staged one is kept without it',
    );
    assert.equal((await again.getEvent(taken?.event.id as string))?.event.idempotencyKey, 'taken');
  });

  it('a batch the store closes on before it is moved: the accepts waiting for its key fail, the next start moves it', async () => {
    const { store, path } = await open();
    const { tenantId, ids } = await tenantWithDestinations(store, 1);
    // Every move fails once the batch is decided (its one durable write: a `tx` outside a `progressTx`).
    let decided = false;
    let inProgress = false;
    const { tx, progressTx } = store;
    store.tx = <T>(fn: () => T): T => {
      const result = tx.call(store, fn) as T;
      if (!inProgress) decided = true;
      return result;
    };
    store.progressTx = <T>(fn: () => T): T => {
      if (decided) throw new Error('disk I/O error');
      inProgress = true;
      try {
        return progressTx.call(store, fn) as T;
      } finally {
        inProgress = false;
      }
    };
    const results = await store.acceptEvents(
      tenantId,
      events(300, ids, (i) => (i === 0 ? 'kept' : null)),
      T0,
      {
        slices: true,
      },
    );
    assert.equal(results.length, 300, 'answered: the batch is durable once decided');
    const waiting = store.acceptEvents(
      tenantId,
      events(1, ids, () => 'kept'),
      T0,
    );
    await store.close();
    await assert.rejects(waiting, /closed before a batch was moved/);
    const { store: again } = await open(path);
    assert.equal(count(again, 'SELECT count(*) FROM events'), 300);
    const [replay] = await again.acceptEvents(
      tenantId,
      events(1, ids, () => 'kept'),
      T0,
    );
    assert.deepEqual(replay, { event: results[0]?.event, replayed: true });
  });
});

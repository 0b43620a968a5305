/**
 * An accept that inserts deliveries already claimed for the caller that publishes them
 * (`NewEvent.queueTo`, docs/adr/0016): only where the destination has no pending delivery,
 * numbered in the destination's sequence, and never waiting for a destination row.
 */

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import type { NewEvent, NewTenant } from '@sluice/store';
import pg from 'pg';
import { PostgresStore } from './postgres-store.ts';
import {
  dropSchema,
  freshSchema,
  newDestination,
  newEvent,
  TEST_DATABASE_URL,
  withPostgres,
} from './testing.ts';

const keyring = newKeyring();
const T0 = 1_700_000_000_000;

await withPostgres('PostgresStore accepts deliveries claimed', () => {
  describe('PostgresStore accepts deliveries claimed for their publisher', () => {
    let schema: string;
    let store: PostgresStore;
    let tenant: NewTenant;
    beforeEach(async () => {
      schema = freshSchema();
      store = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema, poolSize: 5 });
      tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
      await store.createTenant(tenant, 'hash');
    });
    afterEach(async () => {
      await store.close();
      await dropSchema(schema);
    });

    const destination = async () => (await store.createDestination(newDestination(tenant.id), T0)).id;
    const to = (ids: string[], queueTo: string[], n = 0): NewEvent => ({
      ...newEvent(ids, null, n),
      queueTo,
    });
    const status = async (deliveryId: string) => (await store.getDelivery(deliveryId))?.delivery.status;

    it('inserts the marked deliveries queued and numbered, the others pending, and answers them claimed', async () => {
      const [a, b] = [await destination(), await destination()];
      const [first, second] = await store.acceptEvents(
        tenant.id,
        [to([a, b], [a], 0), to([a, b], [a], 1), newEvent([a], null, 2)],
        T0,
      );
      assert.deepEqual(
        first?.claimed?.map((c) => [c.destinationId, c.sequence, c.eventType, c.attempts]),
        [[a, 1, 'order.created', 0]],
      );
      assert.deepEqual(
        second?.claimed?.map((c) => [c.destinationId, c.sequence]),
        [[a, 2]],
      );
      for (const r of [first, second]) {
        const [da, db] = r?.event.deliveries ?? [];
        assert.equal(await status(da?.id as string), 'queued');
        assert.equal(await status(db?.id as string), 'pending', 'not marked: pending');
      }
      // The sequence goes on from there: the claim of the pending one numbers it 3.
      const claim = await store.claimDue(a, 10, T0 + 1);
      assert.deepEqual(
        claim.deliveries.map((d) => d.sequence),
        [3],
      );
    });

    it('inserts them pending when the destination has a pending delivery: it was accepted first', async () => {
      const a = await destination();
      const [earlier] = await store.acceptEvents(tenant.id, [newEvent([a])], T0);
      const [later] = await store.acceptEvents(tenant.id, [to([a], [a])], T0 + 1);
      assert.equal(later?.claimed, undefined);
      assert.equal(await status(later?.event.deliveries[0]?.id as string), 'pending');
      const claim = await store.claimDue(a, 10, T0 + 2);
      assert.deepEqual(
        claim.deliveries.map((d) => d.id),
        [earlier, later].map((r) => r?.event.deliveries[0]?.id),
        'in the order they were accepted',
      );
    });

    it('never waits for a destination row another transaction holds: its deliveries go pending', async () => {
      const a = await destination();
      const other = new pg.Client({
        connectionString: TEST_DATABASE_URL,
        options: `-c search_path=${schema}`,
      });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT 1 FROM destinations WHERE id = $1 FOR UPDATE', [a]);
        const [r] = await store.acceptEvents(tenant.id, [to([a], [a])], T0);
        assert.equal(r?.claimed, undefined);
        assert.equal(await status(r?.event.deliveries[0]?.id as string), 'pending');
      } finally {
        await other.query('ROLLBACK');
        await other.end();
      }
    });

    it('a repeated idempotency key answers the first event and claims nothing again', async () => {
      const a = await destination();
      const keyed = { ...newEvent([a], 'k1'), queueTo: [a] };
      const [first] = await store.acceptEvents(tenant.id, [keyed], T0);
      const [again] = await store.acceptEvents(tenant.id, [keyed], T0 + 1);
      assert.equal(first?.claimed?.length, 1);
      assert.equal(again?.replayed, true);
      assert.equal(again?.claimed, undefined);
      assert.equal(again?.event.id, first?.event.id);
    });
  });
});

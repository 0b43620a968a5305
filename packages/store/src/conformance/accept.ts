/** Store conformance: accepting events (fan-out, idempotency keys, one transaction). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@sluice/core';
import { newDestination, newEvent, newTenant, type OpenStore, T0, useStore } from './fixtures.ts';

export function acceptCases(open: OpenStore): void {
  describe('acceptEvents', () => {
    const ctx = useStore(open);

    it('writes each event with one pending delivery per destination, due now', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const results = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id, b.id]), newEvent([b.id], { type: 'order.paid' })],
        T0 + 5,
      );
      assert.equal(results.length, 2);
      assert.ok(results.every((r) => !r.replayed));
      assert.deepEqual(
        results.map((r) => r.event.deliveries.map((d) => d.destinationId)),
        [[a.id, b.id], [b.id]],
      );
      const [first] = results;
      assert.match(first?.event.id ?? '', /^evt_/);
      const found = await ctx.store.getDelivery(first?.event.deliveries[0]?.id ?? '');
      assert.deepEqual(found, {
        delivery: {
          id: first?.event.deliveries[0]?.id,
          eventId: first?.event.id,
          destinationId: a.id,
          tenantId: ctx.tenant.id,
          sequence: null,
          status: 'pending',
          attempts: 0,
          attemptBase: 0,
          nextAttemptAt: T0 + 5,
          lastError: null,
          createdAt: T0 + 5,
          updatedAt: T0 + 5,
        },
        attempts: [],
      });
      assert.match(first?.event.deliveries[0]?.id ?? '', /^dlv_/);
      assert.equal((await ctx.claim(b.id, 10, T0 + 5)).length, 2, 'due at once');
      assert.equal(await ctx.store.getDelivery(newId('dlv')), undefined);
    });

    it('an idempotency key answers with the first event and creates nothing', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const [first] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id, b.id], { idempotencyKey: 'order-1', payload: '{"v":1}' })],
        T0,
      );
      const [again, fresh] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [
          newEvent([a.id], { idempotencyKey: 'order-1', payload: '{"v":2}' }),
          newEvent([a.id], { idempotencyKey: 'order-2' }),
        ],
        T0 + 100,
      );
      assert.equal(first?.replayed, false);
      assert.deepEqual(again, { event: first?.event, replayed: true });
      assert.equal(fresh?.replayed, false);
      const claimed = await ctx.claim(a.id, 10, T0 + 100);
      assert.deepEqual(
        claimed.map((c) => [c.eventId, c.payload]),
        [
          [first?.event.id, '{"v":1}'],
          [fresh?.event.id, '{"order":1}'],
        ],
      );
      assert.equal((await ctx.claim(b.id, 10, T0 + 100)).length, 1);
    });

    it('a key repeated within one batch answers with the first of the batch', async () => {
      const a = await ctx.destination();
      const [one, two] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id], { idempotencyKey: 'k' }), newEvent([a.id], { idempotencyKey: 'k' })],
        T0,
      );
      assert.equal(one?.replayed, false);
      assert.deepEqual(two, { event: one?.event, replayed: true });
      assert.equal((await ctx.claim(a.id, 10, T0)).length, 1);
    });

    it('the same key in another tenant is independent; events without a key never collide', async () => {
      const a = await ctx.destination();
      const other = newTenant();
      await ctx.store.createTenant(other, 'hash-other');
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);
      const [mine] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id], { idempotencyKey: 'k' })],
        T0,
      );
      const [their] = await ctx.store.acceptEvents(
        other.id,
        [newEvent([theirs.id], { idempotencyKey: 'k' })],
        T0,
      );
      assert.equal(their?.replayed, false);
      assert.notEqual(their?.event.id, mine?.event.id);
      const unkeyed = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id]), newEvent([a.id])], T0);
      assert.ok(unkeyed.every((r) => !r.replayed));
      assert.equal((await ctx.claim(a.id, 10, T0)).length, 3);
      assert.equal((await ctx.claim(theirs.id, 10, T0)).length, 1);
    });

    it('a batch whose later event fails leaves nothing', async () => {
      const a = await ctx.destination();
      const broken = newEvent([a.id], { payload: null as unknown as string });
      await assert.rejects(
        ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id], { idempotencyKey: 'first' }), broken], T0),
      );
      assert.deepEqual(await ctx.store.destinationWork(a.id), { nextPendingAt: null, inQueue: 0 });
      assert.deepEqual(await ctx.claim(a.id, 10, T0), []);
      const [retried] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id], { idempotencyKey: 'first' })],
        T0,
      );
      assert.equal(retried?.replayed, false, 'the failed batch did not keep its idempotency key');
    });

    it('a batch naming a destination that does not exist leaves nothing', async (t) => {
      const a = await ctx.destination();
      const accepted = await ctx.store
        .acceptEvents(ctx.tenant.id, [newEvent([a.id]), newEvent([newId('dst')])], T0)
        .then(
          () => true,
          () => false,
        );
      if (accepted) {
        t.skip('this store accepts deliveries for a destination id it does not have');
        return;
      }
      assert.deepEqual(await ctx.store.destinationWork(a.id), { nextPendingAt: null, inQueue: 0 });
    });
  });
}

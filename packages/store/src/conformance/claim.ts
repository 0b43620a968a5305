/** Store conformance: claiming due deliveries and completing their attempts. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '../index.ts';
import { completion, newEvent, type OpenStore, T0, useStore } from './fixtures.ts';

export function claimCases(open: OpenStore): void {
  describe('claimDue', () => {
    const ctx = useStore(open);

    it('claims due deliveries oldest first (by due time, then insertion), at most max', async () => {
      const a = await ctx.destination();
      const [late] = await ctx.accept(a.id, 1, T0 + 30);
      const [early] = await ctx.accept(a.id, 1, T0 + 10);
      const [x, y] = await ctx.accept(a.id, 2, T0 + 20);
      const [z] = await ctx.accept(a.id, 1, T0 + 20);
      const firstTwo = await ctx.claim(a.id, 2, T0 + 100);
      const rest = await ctx.claim(a.id, 10, T0 + 100);
      assert.deepEqual(
        firstTwo.map((c) => c.id),
        [early, x],
      );
      assert.deepEqual(
        rest.map((c) => c.id),
        [y, z, late],
      );
      assert.deepEqual(await ctx.claim(a.id, 10, T0 + 100), [], 'never claimed twice');
    });

    it('claims only due deliveries of that destination, and none with max 0', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const [due] = await ctx.accept(a.id, 1, T0 + 50);
      await ctx.accept(b.id, 1, T0);
      assert.deepEqual(await ctx.claim(a.id, 0, T0 + 50), []);
      assert.deepEqual(await ctx.claim(a.id, 10, T0 + 49), [], 'not due yet');
      assert.deepEqual(
        (await ctx.claim(a.id, 10, T0 + 50)).map((c) => c.id),
        [due],
        'due when nextAttemptAt = now',
      );
    });

    it('claimed deliveries become queued and carry what the request needs', async () => {
      const a = await ctx.destination();
      const payload = '{"b": 1,  "a":"é ✓ \\u00e9"}\n';
      const [result] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id], { type: 'invoice.paid', payload })],
        T0 + 3,
      );
      const deliveryId = result?.event.deliveries[0]?.id as string;
      const claimed = await ctx.claim(a.id, 5, T0 + 8);
      assert.deepEqual(claimed, [
        {
          id: deliveryId,
          eventId: result?.event.id,
          destinationId: a.id,
          eventType: 'invoice.paid',
          payload,
          sequence: 1,
          attempts: 0,
          attemptBase: 0,
          eventCreatedAt: T0 + 3,
        },
      ]);
      assert.equal(await ctx.statusOf(deliveryId), 'queued');
      assert.deepEqual(await ctx.store.destinationWork(a.id), { nextPendingAt: null, inQueue: 1 });
    });
  });

  describe('completeAttempts', () => {
    const ctx = useStore(open);

    it('records attempts in order and moves deliveries to pending, then dead or delivered', async () => {
      const a = await ctx.destination();
      const [failing, ok] = await ctx.accept(a.id, 2, T0);
      const claimed = await ctx.claim(a.id, 2, T0);
      const [c1, c2] = claimed as [ClaimedDelivery, ClaimedDelivery];
      const retry = completion(c1, { status: 'pending', startedAt: T0 + 1, nextAttemptAt: T0 + 1_000 });
      const success = completion(c2, { status: 'delivered', startedAt: T0 + 2 });
      await ctx.store.completeAttempts([retry, success], T0 + 10);

      const afterRetry = await ctx.store.getDelivery(failing as string);
      assert.equal(afterRetry?.delivery.status, 'pending');
      assert.equal(afterRetry?.delivery.attempts, 1);
      assert.equal(afterRetry?.delivery.nextAttemptAt, T0 + 1_000);
      assert.notEqual(afterRetry?.delivery.lastError, null);
      assert.equal(afterRetry?.delivery.updatedAt, T0 + 10);
      const delivered = await ctx.store.getDelivery(ok as string);
      assert.equal(delivered?.delivery.status, 'delivered');
      assert.equal(delivered?.delivery.attempts, 1);
      assert.equal(delivered?.delivery.lastError, null);
      assert.deepEqual(delivered?.attempts, [success.attempt]);

      assert.deepEqual(await ctx.claim(a.id, 10, T0 + 999), [], 'the retry waits for its time');
      const [again] = await ctx.claim(a.id, 10, T0 + 1_000);
      assert.equal(again?.id, failing);
      assert.equal(again?.attempts, 1);
      const last = completion(again as ClaimedDelivery, {
        status: 'dead',
        startedAt: T0 + 1_001,
        statusCode: null,
        errorCode: 'UND_ERR_CONNECT_TIMEOUT',
      });
      await ctx.store.completeAttempts([last], T0 + 1_010);
      const dead = await ctx.store.getDelivery(failing as string);
      assert.equal(dead?.delivery.status, 'dead');
      assert.equal(dead?.delivery.attempts, 2);
      assert.deepEqual(dead?.attempts, [retry.attempt, last.attempt]);
      assert.deepEqual(await ctx.claim(a.id, 10, T0 + 100_000), []);
    });

    it('disableDestination disables the destination with a reason', async () => {
      const a = await ctx.destination();
      await ctx.accept(a.id, 1, T0);
      const [claimed] = await ctx.claim(a.id, 1, T0);
      await ctx.store.completeAttempts(
        [
          completion(claimed as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0 + 1,
            statusCode: 410,
            nextAttemptAt: T0 + 2,
            disableDestination: true,
          }),
        ],
        T0 + 5,
      );
      const disabled = await ctx.store.getDestination(a.id);
      assert.equal(disabled?.state, 'disabled');
      assert.equal(typeof disabled?.disabledReason, 'string');
      assert.notEqual(disabled?.disabledReason, '');
      assert.equal(await ctx.statusOf(claimed?.id as string), 'pending', 'nothing is lost');
      assert.deepEqual(await ctx.store.pendingDestinations(), []);
    });

    it('a completion for a delivery no longer queued does not resurrect it', async () => {
      const a = await ctx.destination();
      const [cancelled] = await ctx.accept(a.id, 1, T0);
      const [claimed] = await ctx.claim(a.id, 1, T0);
      await ctx.store.deleteDestination(a.id, T0 + 1);
      await ctx.store.completeAttempts(
        [
          completion(claimed as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0,
            nextAttemptAt: T0 + 5,
          }),
        ],
        T0 + 2,
      );
      assert.equal(await ctx.statusOf(cancelled as string), 'cancelled');
      await ctx.store.completeAttempts(
        [completion(claimed as ClaimedDelivery, { status: 'delivered', startedAt: T0 })],
        T0 + 3,
      );
      assert.equal(await ctx.statusOf(cancelled as string), 'cancelled');

      const b = await ctx.destination();
      const [done] = await ctx.accept(b.id, 1, T0);
      const [twice] = await ctx.claim(b.id, 1, T0);
      await ctx.store.completeAttempts(
        [completion(twice as ClaimedDelivery, { status: 'delivered', startedAt: T0 })],
        T0,
      );
      await ctx.store.completeAttempts(
        [completion(twice as ClaimedDelivery, { status: 'pending', startedAt: T0, nextAttemptAt: T0 })],
        T0 + 1,
      );
      assert.equal(await ctx.statusOf(done as string), 'delivered', 'a repeated completion changes nothing');
      assert.deepEqual(await ctx.claim(b.id, 10, T0 + 10), []);
      await ctx.store.completeAttempts([], T0);
    });
  });
}

/** Store conformance: what a destination has left, and claims given back (requeue, releaseClaims). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '../index.ts';
import {
  byDestination,
  completion,
  newDestination,
  newEvent,
  newTenant,
  type OpenStore,
  T0,
  useStore,
} from './fixtures.ts';

export function workCases(open: OpenStore): void {
  describe('destination work', () => {
    const ctx = useStore(open);

    it('destinationWork: earliest pending time and how many are queued', async () => {
      const a = await ctx.destination();
      assert.deepEqual(await ctx.store.destinationWork(a.id), { nextPendingAt: null, inQueue: 0 });
      await ctx.accept(a.id, 1, T0 + 100);
      await ctx.accept(a.id, 1, T0 + 200);
      await ctx.accept(a.id, 1, T0 + 300);
      const [first] = await ctx.claim(a.id, 1, T0 + 150);
      assert.deepEqual(await ctx.store.destinationWork(a.id), { nextPendingAt: T0 + 200, inQueue: 1 });
      await ctx.store.completeAttempts(
        [
          completion(first as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0 + 150,
            nextAttemptAt: T0 + 50,
          }),
        ],
        T0 + 160,
      );
      assert.deepEqual(await ctx.store.destinationWork(a.id), { nextPendingAt: T0 + 50, inQueue: 0 });
    });

    it('claimDue tells when the next delivery left pending is due', async () => {
      const a = await ctx.destination();
      assert.deepEqual(await ctx.store.claimDue(a.id, 5, T0), { deliveries: [], nextPendingAt: null });
      await ctx.accept(a.id, 2, T0 + 100);
      await ctx.accept(a.id, 1, T0 + 300);
      const first = await ctx.store.claimDue(a.id, 1, T0 + 150);
      assert.equal(first.deliveries.length, 1);
      assert.equal(first.nextPendingAt, T0 + 100, 'the second of the same time is still due');
      const rest = await ctx.store.claimDue(a.id, 5, T0 + 150);
      assert.equal(rest.deliveries.length, 1);
      assert.equal(rest.nextPendingAt, T0 + 300, 'what it claimed is not pending any more');
      assert.deepEqual(await ctx.store.claimDue(a.id, 0, T0 + 150), {
        deliveries: [],
        nextPendingAt: T0 + 300,
      });
      const last = await ctx.store.claimDue(a.id, 5, T0 + 300);
      assert.deepEqual([last.deliveries.length, last.nextPendingAt], [1, null]);
    });

    it('pendingDestinations: active, not deleted, with pending work, and its earliest time', async () => {
      const active = await ctx.destination();
      const future = await ctx.destination();
      const paused = await ctx.destination();
      const disabled = await ctx.destination();
      const deleted = await ctx.destination();
      const queuedOnly = await ctx.destination();
      await ctx.destination(); // nothing at all
      const other = newTenant();
      await ctx.store.createTenant(other, 'hash-other');
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);

      await ctx.accept(active.id, 1, T0 + 100);
      await ctx.accept(active.id, 1, T0 + 200);
      const [retried] = await ctx.claim(active.id, 1, T0 + 100);
      await ctx.store.completeAttempts(
        [
          completion(retried as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0 + 100,
            nextAttemptAt: T0 + 900,
          }),
        ],
        T0 + 110,
      );
      await ctx.accept(future.id, 1, T0);
      const [later] = await ctx.claim(future.id, 1, T0);
      await ctx.store.completeAttempts(
        [
          completion(later as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0,
            nextAttemptAt: T0 + 10_000,
          }),
        ],
        T0 + 1,
      );
      for (const d of [paused, disabled, deleted, queuedOnly]) await ctx.accept(d.id, 1, T0);
      await ctx.store.acceptEvents(other.id, [newEvent([theirs.id])], T0 + 7);
      await ctx.store.updateDestination(paused.id, { state: 'paused' }, T0 + 1);
      await ctx.store.updateDestination(disabled.id, { state: 'disabled', disabledReason: 'gone' }, T0 + 1);
      await ctx.store.deleteDestination(deleted.id, T0 + 1);
      await ctx.claim(queuedOnly.id, 1, T0);

      assert.deepEqual(
        byDestination(await ctx.store.pendingDestinations()),
        byDestination([
          { destinationId: active.id, nextPendingAt: T0 + 200 },
          { destinationId: future.id, nextPendingAt: T0 + 10_000 },
          { destinationId: theirs.id, nextPendingAt: T0 + 7 },
        ]),
      );
      // The backlog age reads the same rows: paused, disabled and deleted ones do not count.
      assert.equal(await ctx.store.oldestDueAt(T0 + 500), T0 + 7);
      assert.equal(await ctx.store.oldestDueAt(T0 + 6), null, 'nothing due yet');
    });

    it('oldestDueAt: null with nothing pending', async () => {
      await ctx.destination();
      assert.equal(await ctx.store.oldestDueAt(T0), null);
    });
  });

  describe('requeue', () => {
    const ctx = useStore(open);

    it('returns deliveries claimed before the cutoff to pending, due now, except those kept', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const [a1, a2, a3] = await ctx.accept(a.id, 3, T0);
      const [b1, b2] = await ctx.accept(b.id, 2, T0);
      await ctx.claim(a.id, 2, T0 + 10); // a1, a2
      await ctx.claim(b.id, 1, T0 + 20); // b1
      await ctx.claim(a.id, 1, T0 + 30); // a3: at the cutoff, not before it
      await ctx.claim(b.id, 1, T0 + 30); // b2

      assert.deepEqual(
        (await ctx.store.staleClaims(T0 + 30)).sort((x, y) => (x.id < y.id ? -1 : 1)),
        [
          [a1, a.id],
          [a2, a.id],
          [b1, b.id],
        ]
          .sort(([x], [y]) => ((x as string) < (y as string) ? -1 : 1))
          .map(([id, destinationId]) => ({ id, destinationId, attempts: 0 })),
        'the candidates: claimed before the cutoff, in id order',
      );
      const requeued = await ctx.store.requeue(T0 + 30, new Set([a1 as string]), T0 + 100);
      assert.deepEqual(
        requeued,
        new Map([
          [a.id, 1],
          [b.id, 1],
        ]),
      );
      for (const id of [a1, a3, b2]) assert.equal(await ctx.statusOf(id as string), 'queued');
      const back = await ctx.store.getDelivery(a2 as string);
      assert.equal(back?.delivery.status, 'pending');
      assert.equal(back?.delivery.nextAttemptAt, T0 + 100);
      assert.equal(back?.delivery.attempts, 0);
      assert.equal(await ctx.statusOf(b1 as string), 'pending');
      assert.deepEqual(
        (await ctx.claim(a.id, 10, T0 + 100)).map((c) => c.id),
        [a2],
      );
      assert.deepEqual(
        await ctx.store.requeue(T0 + 30, new Set([a1 as string]), T0 + 200),
        new Map(),
        'nothing else was claimed before the cutoff',
      );
    });

    it('with no cutoff it takes every claimed delivery and leaves the others alone', async () => {
      const a = await ctx.destination();
      const gone = await ctx.destination();
      const [pending, delivered, dead, queued] = await ctx.accept(a.id, 4, T0);
      const [cancelled] = await ctx.accept(gone.id, 1, T0);
      await ctx.claim(gone.id, 1, T0);
      await ctx.store.deleteDestination(gone.id, T0 + 1);
      const claimed = await ctx.claim(a.id, 4, T0);
      await ctx.store.completeAttempts(
        [
          completion(claimed[0] as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0,
            nextAttemptAt: T0 + 500,
          }),
          completion(claimed[1] as ClaimedDelivery, { status: 'delivered', startedAt: T0 }),
          completion(claimed[2] as ClaimedDelivery, { status: 'dead', startedAt: T0 }),
        ],
        T0 + 2,
      );
      assert.deepEqual(
        await ctx.store.staleClaims(Number.POSITIVE_INFINITY),
        [{ id: queued, destinationId: a.id, attempts: 0 }],
        'settled, pending and cancelled deliveries are no candidates',
      );
      const requeued = await ctx.store.requeue(Number.POSITIVE_INFINITY, new Set(), T0 + 50);
      assert.deepEqual(requeued, new Map([[a.id, 1]]));
      assert.equal((await ctx.store.getDelivery(queued as string))?.delivery.nextAttemptAt, T0 + 50);
      assert.equal((await ctx.store.getDelivery(pending as string))?.delivery.nextAttemptAt, T0 + 500);
      assert.equal(await ctx.statusOf(delivered as string), 'delivered');
      assert.equal(await ctx.statusOf(dead as string), 'dead');
      assert.equal(await ctx.statusOf(cancelled as string), 'cancelled');
    });
  });

  describe('requeue after a crash', () => {
    const ctx = useStore(open);

    it('attempted: each claim returned counts as an attempt, so its repeat is numbered one higher', async () => {
      const a = await ctx.destination();
      const [a1, a2] = await ctx.accept(a.id, 2, T0);
      await ctx.claim(a.id, 1, T0 + 10); // a1
      assert.deepEqual(
        await ctx.store.requeue(Number.POSITIVE_INFINITY, new Set(), T0 + 30, true),
        new Map([[a.id, 1]]),
      );
      assert.equal(
        (await ctx.store.getDelivery(a1 as string))?.delivery.attempts,
        1,
        'it may have been sent',
      );
      assert.equal(
        (await ctx.store.getDelivery(a2 as string))?.delivery.attempts,
        0,
        'never claimed: untouched',
      );
      assert.deepEqual(
        (await ctx.claim(a.id, 10, T0 + 40)).map((c) => [c.id, c.attempts]),
        [
          [a2, 0],
          [a1, 1],
        ],
        'claimed again (the returned one due since its return)',
      );
    });
  });

  describe('releaseClaims', () => {
    const ctx = useStore(open);

    it('returns unstarted claims to pending in their place; anything not queued stays', async () => {
      const a = await ctx.destination();
      const [a1, a2, a3, a4] = await ctx.accept(a.id, 4, T0);
      const claimed = await ctx.claim(a.id, 4, T0 + 10);
      await ctx.store.completeAttempts(
        [completion(claimed[3] as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 11 })],
        T0 + 12,
      );
      assert.equal(await ctx.store.releaseClaims([a1, a2, a4, 'dlv_missing'] as string[], T0 + 20), 2);
      assert.equal(await ctx.store.releaseClaims([], T0 + 20), 0);
      for (const id of [a1, a2]) {
        const back = await ctx.store.getDelivery(id as string);
        assert.equal(back?.delivery.status, 'pending');
        assert.equal(back?.delivery.nextAttemptAt, T0, 'due as before');
        assert.equal(back?.delivery.attempts, 0);
      }
      assert.equal(await ctx.statusOf(a3 as string), 'queued');
      assert.equal(await ctx.statusOf(a4 as string), 'delivered');
      assert.equal(await ctx.store.releaseClaims([a3 as string], T0 + 21, true), 1);
      assert.equal(
        (await ctx.store.getDelivery(a3 as string))?.delivery.attempts,
        1,
        'released after it may have been sent: it counts as an attempt',
      );
      assert.deepEqual(
        await ctx.store.staleClaims(Number.POSITIVE_INFINITY),
        [],
        'a released delivery is no claim',
      );
      assert.deepEqual(
        (await ctx.claim(a.id, 10, T0 + 30)).map((c) => [c.id, c.attempts]),
        [
          [a1, 0],
          [a2, 0],
          [a3, 1],
        ],
        'claimed again, oldest first',
      );
    });
  });
}

/** Store conformance: attempt history and the counts of a destination. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '../index.ts';
import { completion, type OpenStore, T0, useStore } from './fixtures.ts';

export function countCases(open: OpenStore): void {
  describe('attempt history and counts', () => {
    const ctx = useStore(open);

    it('recentAttempts: attempts started since a time, oldest first', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      await ctx.attemptsAt(a.id, [T0 + 300, T0 + 100], T0);
      await ctx.attemptsAt(b.id, [T0 + 50, T0 + 200], T0);
      assert.deepEqual(await ctx.store.recentAttempts(T0 + 100), [
        { destinationId: a.id, startedAt: T0 + 100, finishedAt: T0 + 107 },
        { destinationId: b.id, startedAt: T0 + 200, finishedAt: T0 + 207 },
        { destinationId: a.id, startedAt: T0 + 300, finishedAt: T0 + 307 },
      ]);
      assert.deepEqual(await ctx.store.recentAttempts(T0 + 301), []);
    });

    it('attemptTimes: start times in [from, to), sorted, of one destination', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      await ctx.attemptsAt(a.id, [T0 + 400, T0 + 200, T0 + 100, T0 + 300, T0 + 250], T0);
      await ctx.attemptsAt(b.id, [T0 + 260], T0);
      assert.deepEqual(await ctx.store.attemptTimes(a.id, T0 + 200, T0 + 400), [
        T0 + 200,
        T0 + 250,
        T0 + 300,
      ]);
      assert.deepEqual(await ctx.store.attemptTimes(a.id, T0 + 500, T0 + 600), []);
    });

    it('countsFor: pending, in queue, oldest pending, and delivered/dead within the span', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      assert.deepEqual(await ctx.store.countsFor(a.id, T0, T0 + 10), {
        pending: 0,
        inQueue: 0,
        oldestPendingAt: null,
        delivered: 0,
        dead: 0,
      });
      // Delivered before the span: not counted.
      await ctx.accept(a.id, 1, T0 + 100);
      const [old] = await ctx.claim(a.id, 1, T0 + 100);
      await ctx.store.completeAttempts(
        [completion(old as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 100 })],
        T0 + 500,
      );
      // Created at T0 + 200, pending again with a later retry: the oldest pending.
      await ctx.accept(a.id, 1, T0 + 200);
      const [retried] = await ctx.claim(a.id, 1, T0 + 200);
      await ctx.store.completeAttempts(
        [
          completion(retried as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0 + 200,
            nextAttemptAt: T0 + 5_000,
          }),
        ],
        T0 + 250,
      );
      await ctx.accept(a.id, 3, T0 + 1_200);
      const [ok, failed] = await ctx.claim(a.id, 3, T0 + 1_200);
      await ctx.store.completeAttempts(
        [completion(ok as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 1_200 })],
        T0 + 1_500,
      );
      await ctx.store.completeAttempts(
        [completion(failed as ClaimedDelivery, { status: 'dead', startedAt: T0 + 1_200 })],
        T0 + 1_600,
      );
      await ctx.accept(a.id, 1, T0 + 2_000);
      await ctx.attemptsAt(b.id, [T0 + 1_300], T0 + 1_300);

      assert.deepEqual(await ctx.store.countsFor(a.id, T0 + 1_000, T0 + 3_000), {
        pending: 2,
        inQueue: 1,
        oldestPendingAt: T0 + 200,
        delivered: 1,
        dead: 1,
      });
    });

    it('countsForMany: countsFor of each destination, in one call; an id with nothing, zeros', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const idle = await ctx.destination();
      await ctx.accept(a.id, 3, T0 + 100);
      const [sent, died] = await ctx.claim(a.id, 2, T0 + 200);
      await ctx.store.completeAttempts(
        [
          completion(sent as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 200 }),
          completion(died as ClaimedDelivery, { status: 'dead', startedAt: T0 + 200 }),
        ],
        T0 + 300,
      );
      await ctx.accept(b.id, 2, T0 + 400);
      await ctx.claim(b.id, 1, T0 + 500);
      await ctx.attemptsAt(b.id, [T0 + 150], T0 + 150);

      const many = await ctx.store.countsForMany([a.id, b.id, idle.id], T0 + 100);
      assert.deepEqual([...many.keys()].sort(), [a.id, b.id, idle.id].sort());
      for (const id of [a.id, b.id, idle.id]) {
        assert.deepEqual(many.get(id), await ctx.store.countsFor(id, T0 + 100, T0 + 1_000), id);
      }
      assert.deepEqual(many.get(a.id), {
        pending: 1,
        inQueue: 0,
        oldestPendingAt: T0 + 100,
        delivered: 1,
        dead: 1,
      });
      assert.deepEqual(many.get(b.id), {
        pending: 1,
        inQueue: 1,
        oldestPendingAt: T0 + 400,
        delivered: 1,
        dead: 0,
      });
      assert.equal(
        (await ctx.store.countsForMany([b.id], T0 + 160)).get(b.id)?.delivered,
        0,
        'the span counts',
      );
      assert.deepEqual(await ctx.store.countsForMany([], T0), new Map());
    });
  });
}

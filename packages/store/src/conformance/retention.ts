/** Store conformance: replay, manual retry, retention, and the store's own lifecycle. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@sluice/core';
import type { ClaimedDelivery, RetentionResult } from '../index.ts';
import { completion, newEvent, type OpenStore, T0, useStore } from './fixtures.ts';

export function retentionCases(open: OpenStore): void {
  describe('replay, retry and retention', () => {
    const ctx = useStore(open);

    /** Accepts `count` events for `destinationId` and fails each once, finally: dead at `at`. */
    const dieAt = async (destinationId: string, count: number, at: number): Promise<string[]> => {
      const ids = await ctx.accept(destinationId, count, at);
      const claimed = await ctx.claim(destinationId, count, at);
      await ctx.store.completeAttempts(
        claimed.map((c) => completion(c, { status: 'dead', startedAt: at })),
        at,
      );
      return ids;
    };

    it('replayDead: dead deliveries since a time back to pending, due now, with a fresh budget', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const [early] = await dieAt(a.id, 1, T0 + 100);
      const [late] = await dieAt(a.id, 1, T0 + 500);
      const [elsewhere] = await dieAt(b.id, 1, T0 + 500);
      await ctx.accept(a.id, 1, T0 + 600);

      assert.equal(await ctx.store.replayDead(a.id, T0 + 500, T0 + 1_000), 1, 'died at or after since');
      const replayed = await ctx.store.getDelivery(late as string);
      assert.equal(replayed?.delivery.status, 'pending');
      assert.equal(replayed?.delivery.nextAttemptAt, T0 + 1_000);
      assert.equal(replayed?.delivery.attempts, 1);
      assert.equal(replayed?.delivery.attemptBase, 1);
      assert.equal(await ctx.statusOf(early as string), 'dead');

      assert.equal(await ctx.store.replayDead(a.id, null, T0 + 2_000), 1, 'null: every dead one');
      assert.equal(await ctx.statusOf(early as string), 'pending');
      assert.equal(await ctx.statusOf(elsewhere as string), 'dead', 'only that destination');
      assert.equal(await ctx.store.replayDead(a.id, null, T0 + 3_000), 0);

      const claimed = await ctx.claim(a.id, 10, T0 + 2_000);
      const again = claimed.find((c) => c.id === late);
      assert.equal(again?.attempts, 1);
      assert.equal(again?.attemptBase, 1);
      await ctx.store.completeAttempts(
        [completion(again as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 2_001 })],
        T0 + 2_010,
      );
      const done = await ctx.store.getDelivery(late as string);
      assert.deepEqual(
        done?.attempts.map((x) => x.attempt),
        [1, 2],
        'attempt numbers keep counting',
      );
    });

    it('retryDelivery: a dead or pending delivery is due now with a fresh budget; others conflict', async () => {
      const a = await ctx.destination();
      const [dead] = await dieAt(a.id, 1, T0 + 10);
      const [waiting, queued, delivered] = await ctx.accept(a.id, 3, T0 + 20);
      const claimed = await ctx.claim(a.id, 3, T0 + 20);
      await ctx.store.completeAttempts(
        [
          completion(claimed[0] as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0 + 20,
            nextAttemptAt: T0 + 9_000,
          }),
          completion(claimed[2] as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 20 }),
        ],
        T0 + 30,
      );
      const gone = await ctx.destination();
      const [cancelled] = await ctx.accept(gone.id, 1, T0);
      await ctx.store.deleteDestination(gone.id, T0 + 1);

      const retried = await ctx.store.retryDelivery(dead as string, T0 + 100);
      assert.equal(retried.ok, true);
      if (retried.ok) {
        assert.equal(retried.delivery.id, dead);
        assert.equal(retried.delivery.status, 'pending');
        assert.equal(retried.delivery.nextAttemptAt, T0 + 100);
        assert.equal(retried.delivery.attemptBase, 1);
        assert.equal(retried.delivery.attempts, 1);
        assert.deepEqual((await ctx.store.getDelivery(dead as string))?.delivery, retried.delivery);
      }
      const sooner = await ctx.store.retryDelivery(waiting as string, T0 + 100);
      assert.equal(sooner.ok && sooner.delivery.nextAttemptAt, T0 + 100);
      assert.equal(sooner.ok && sooner.delivery.attemptBase, 1);
      for (const id of [queued, delivered, cancelled]) {
        assert.deepEqual(await ctx.store.retryDelivery(id as string, T0 + 100), {
          ok: false,
          reason: 'conflict',
        });
      }
      assert.equal(await ctx.statusOf(queued as string), 'queued');
      assert.deepEqual(await ctx.store.retryDelivery(newId('dlv'), T0 + 100), {
        ok: false,
        reason: 'not_found',
      });
      assert.deepEqual(
        (await ctx.claim(a.id, 10, T0 + 100)).map((c) => c.id),
        [dead, waiting],
      );
    });

    // Pending work of a deleted destination never leaves `pending` (nothing ticks it), so
    // neither a retry nor a replay may create it (docs/design.md I1: every accepted event ends).
    it('retryDelivery does not bring back a dead delivery of a deleted destination', async () => {
      const a = await ctx.destination();
      const [dead] = await dieAt(a.id, 1, T0 + 10);
      assert.equal(await ctx.store.deleteDestination(a.id, T0 + 20), true);
      const retried = await ctx.store.retryDelivery(dead as string, T0 + 30);
      assert.equal(retried.ok, false, `retryDelivery answered ${JSON.stringify(retried)}`);
      assert.notEqual(await ctx.statusOf(dead as string), 'pending');
    });

    it('replayDead does not bring back dead deliveries of a deleted destination', async () => {
      const a = await ctx.destination();
      const [dead] = await dieAt(a.id, 1, T0 + 10);
      assert.equal(await ctx.store.deleteDestination(a.id, T0 + 20), true);
      assert.equal(await ctx.store.replayDead(a.id, null, T0 + 30), 0);
      assert.notEqual(await ctx.statusOf(dead as string), 'pending');
    });

    it('deleteExpired: settled deliveries, their attempts and finished events, in batches', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const gone = await ctx.destination();
      // Expired: delivered before the cutoff (with its attempt), and its event.
      const [oldDelivered] = await ctx.accept(a.id, 1, T0);
      await ctx.store.completeAttempts(
        (await ctx.claim(a.id, 1, T0)).map((c) => completion(c, { status: 'delivered', startedAt: T0 })),
        T0 + 100,
      );
      // Kept: dead deliveries stay until replayed.
      const [oldDead] = await dieAt(a.id, 1, T0 + 100);
      // Split: the delivery to a expires, the one to b is pending: the event stays.
      const [split] = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id, b.id])], T0 + 200);
      await ctx.store.completeAttempts(
        (await ctx.claim(a.id, 1, T0 + 200)).map((c) =>
          completion(c, { status: 'delivered', startedAt: T0 + 200 }),
        ),
        T0 + 300,
      );
      // Expired: cancelled by a delete.
      const [cancelled] = await ctx.accept(gone.id, 1, T0 + 300);
      await ctx.store.deleteDestination(gone.id, T0 + 400);
      // Kept: delivered after the cutoff.
      const [recent] = await ctx.accept(a.id, 1, T0 + 500);
      await ctx.store.completeAttempts(
        (await ctx.claim(a.id, 1, T0 + 500)).map((c) =>
          completion(c, { status: 'delivered', startedAt: T0 + 500 }),
        ),
        T0 + 5_000,
      );
      const before = T0 + 1_000;

      const total: RetentionResult = { deliveries: 0, attempts: 0, events: 0, transitions: 0 };
      for (let i = 0; ; i++) {
        assert.ok(i < 10, 'retention ends');
        const done = await ctx.store.deleteExpired(before, 1);
        assert.ok(done.deliveries <= 1 && done.events <= 1, `at most one per batch: ${JSON.stringify(done)}`);
        if (done.deliveries + done.attempts + done.events === 0) break;
        total.deliveries += done.deliveries;
        total.attempts += done.attempts;
        total.events += done.events;
      }
      assert.deepEqual(total, { deliveries: 3, attempts: 2, events: 2, transitions: 0 });

      assert.equal(await ctx.store.getDelivery(oldDelivered as string), undefined);
      assert.equal(await ctx.store.getDelivery(cancelled as string), undefined);
      assert.equal(await ctx.store.getDelivery(split?.event.deliveries[0]?.id as string), undefined);
      assert.equal(await ctx.statusOf(oldDead as string), 'dead');
      assert.equal(await ctx.statusOf(recent as string), 'delivered');
      assert.equal((await ctx.store.getDelivery(recent as string))?.attempts.length, 1);
      const stillThere = await ctx.store.getEvent(split?.event.id as string);
      assert.deepEqual(
        stillThere?.deliveries.map((d) => d.destinationId),
        [b.id],
      );
      assert.deepEqual(
        await ctx.store.attemptTimes(a.id, T0, T0 + 1_000),
        [T0 + 100, T0 + 500],
        'the kept deliveries keep their attempts',
      );
      assert.deepEqual(await ctx.store.deleteExpired(before, 100), {
        deliveries: 0,
        attempts: 0,
        events: 0,
        transitions: 0,
      });
    });
  });

  describe('lifecycle', () => {
    const ctx = useStore(open);

    it('ping answers while open; close releases the store', async () => {
      await ctx.store.ping();
      await ctx.store.close();
      await assert.rejects(ctx.store.ping());
    });
  });
}

/**
 * Store conformance, part two: the per-destination sequence and the fifo claim order
 * (docs/adr/0006). Run by `storeConformance` inside its own `describe`, on the same stores.
 *
 * - an accepted delivery has no sequence; its first claim gives it the destination's next
 *   one: 1, 2, 3… per destination, in claim order, across claims and fan-out, with no gap
 *   (a failed batch, an idempotent repeat, a delivery cancelled before its first claim take
 *   none);
 * - a retry, a requeue, a replay and a manual retry keep the sequence;
 * - claims of different destinations interleave freely; two claims of one destination (a
 *   tick's claim is exclusive, so this should not happen) still take distinct numbers;
 * - `claimDue(…, 'sequence')` (fifo) takes first attempts in acceptance order and a due retry
 *   before them; a delivery waiting for its retry does not hold back the ones behind it.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@sluice/core';
import type { ClaimedDelivery, CompletedAttempt, Destination } from '../index.ts';
import { newDestination, newEvent, type OpenStore, T0, useStore } from './fixtures.ts';

function completion(
  claimed: ClaimedDelivery,
  status: CompletedAttempt['status'],
  startedAt: number,
  nextAttemptAt: number | null = null,
): CompletedAttempt {
  return {
    attempt: {
      id: newId('att'),
      deliveryId: claimed.id,
      destinationId: claimed.destinationId,
      attempt: claimed.attempts + 1,
      startedAt,
      finishedAt: startedAt + 5,
      // A dead one got the receiver's answer (422), not an outage: a run of 5xx would degrade
      // the destination, whose breaker then holds its failures instead of letting them die.
      statusCode: status === 'delivered' ? 200 : status === 'dead' ? 422 : 500,
      errorCode: null,
      errorMessage: null,
      responseExcerpt: null,
    },
    status,
    nextAttemptAt,
    disableDestination: false,
  };
}

export function orderingConformance(open: OpenStore): void {
  describe('sequence and fifo order', () => {
    const ctx = useStore(open);

    const destination = (ordering: Destination['ordering'] = 'none'): Promise<Destination> =>
      ctx.store.createDestination(
        newDestination(ctx.tenant.id, { name: null, url: 'https://hooks.example.com/in', ordering }),
        T0,
      );

    /** Accepts one event per due time for `destinationId`; returns the delivery ids in order. */
    const acceptAt = async (destinationId: string, dueTimes: number[]): Promise<string[]> => {
      const ids: string[] = [];
      for (const at of dueTimes) {
        const [r] = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([destinationId])], at);
        ids.push(r?.event.deliveries[0]?.id ?? assert.fail('no delivery'));
      }
      return ids;
    };

    const sequenceOf = async (deliveryId: string) =>
      (await ctx.store.getDelivery(deliveryId))?.delivery.sequence;

    /** The numbered deliveries' sequences, ascending. */
    const sequencesOf = async (destinationId: string): Promise<number[]> => {
      const page = await ctx.store.listDeliveries({ destinationId }, { limit: 500 });
      return page.items.flatMap((d) => (d.sequence === null ? [] : [d.sequence])).sort((a, b) => a - b);
    };

    it('a destination created with ordering fifo keeps it; a patch changes it', async () => {
      const fifo = await destination('fifo');
      assert.equal((await ctx.store.getDestination(fifo.id))?.ordering, 'fifo');
      const plain = await destination();
      assert.equal((await ctx.store.getDestination(plain.id))?.ordering, 'none');
      const patched = await ctx.store.updateDestination(plain.id, { ordering: 'fifo' }, T0 + 1);
      assert.equal(patched?.ordering, 'fifo');
      assert.equal((await ctx.store.getDestination(plain.id))?.ordering, 'fifo');
      const other = await ctx.store.updateDestination(fifo.id, { name: 'renamed' }, T0 + 2);
      assert.equal(other?.ordering, 'fifo', 'a patch of another field keeps the ordering');
    });

    /** Claims everything due at `at` for `destinationId`, in claim order. */
    const claimAll = async (destinationId: string, at: number, order: 'due' | 'sequence' = 'due') =>
      (await ctx.store.claimDue(destinationId, 500, at, order)).deliveries;

    it('an accepted delivery has no sequence; its first claim numbers it 1, 2, 3… in claim order', async () => {
      const a = await destination();
      const b = await destination('fifo');
      const batch = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id, b.id]), newEvent([b.id]), newEvent([a.id])],
        T0,
      );
      const more = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([b.id, a.id]), newEvent([a.id])],
        T0 + 1,
      );
      const ids = [...batch, ...more].flatMap((r) => r.event.deliveries);
      for (const d of ids) assert.equal(await sequenceOf(d.id), null, 'not numbered before its first claim');
      assert.deepEqual(await sequencesOf(a.id), []);

      const [a1, a2] = (await ctx.store.claimDue(a.id, 2, T0 + 1)).deliveries;
      const aRest = await claimAll(a.id, T0 + 1);
      assert.deepEqual(
        [a1, a2, ...aRest].map((d) => d?.sequence),
        [1, 2, 3, 4],
        'a claimed delivery carries its sequence; the next claim goes on from there',
      );
      assert.deepEqual(
        [a1, a2, ...aRest].map((d) => d?.id),
        ids.filter((d) => d.destinationId === a.id).map((d) => d.id),
        'claim order (due, then acceptance)',
      );
      const bClaimed = await claimAll(b.id, T0 + 1, 'sequence');
      assert.deepEqual(
        bClaimed.map((d) => [d.id, d.sequence]),
        ids.filter((d) => d.destinationId === b.id).map((d, i) => [d.id, i + 1]),
        'each destination counts on its own',
      );
      for (const d of [a1, a2, ...aRest, ...bClaimed]) {
        assert.equal(await sequenceOf(d?.id ?? ''), d?.sequence, 'the stored sequence is the one sent');
      }
      assert.deepEqual(await sequencesOf(a.id), [1, 2, 3, 4]);
      assert.deepEqual(await sequencesOf(b.id), [1, 2, 3]);
    });

    it('no gap: an idempotent repeat, a failed batch and a delivery cancelled unclaimed take no sequence', async () => {
      const a = await destination();
      await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id], { idempotencyKey: 'k' })], T0);
      const [again] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([a.id], { idempotencyKey: 'k' })],
        T0 + 1,
      );
      assert.equal(again?.replayed, true);
      const broken = newEvent([a.id], { payload: null as unknown as string });
      await assert.rejects(ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id]), broken], T0 + 2));
      const [next] = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id])], T0 + 3);
      assert.deepEqual(
        (await claimAll(a.id, T0 + 3)).map((d) => d.sequence),
        [1, 2],
      );
      assert.equal(await sequenceOf(next?.event.deliveries[0]?.id as string), 2);

      // Cancelled before its first claim (the destination deleted): it never takes a number.
      const gone = await destination();
      const [sent, unsent] = await acceptAt(gone.id, [T0, T0]);
      assert.deepEqual(
        (await ctx.store.claimDue(gone.id, 1, T0)).deliveries.map((d) => [d.id, d.sequence]),
        [[sent, 1]],
      );
      assert.equal(await ctx.store.deleteDestination(gone.id, T0 + 1), true);
      const cancelled = (await ctx.store.getDelivery(unsent as string))?.delivery;
      assert.deepEqual([cancelled?.status, cancelled?.sequence], ['cancelled', null]);
    });

    it('concurrent accepts for one destination, then claims: every delivery once, numbered 1..N', async () => {
      const a = await destination();
      const b = await destination();
      const batches = Array.from({ length: 20 }, (_, i) =>
        ctx.store.acceptEvents(
          ctx.tenant.id,
          Array.from({ length: 1 + (i % 3) }, () => newEvent(i % 2 === 0 ? [a.id, b.id] : [b.id, a.id])),
          T0 + i,
        ),
      );
      const accepted = (await Promise.all(batches)).flat().length;
      const expected = Array.from({ length: accepted }, (_, i) => i + 1);
      // Claims of two destinations interleave; each destination's numbers stay its own.
      const claimed = new Map<string, ClaimedDelivery[]>([
        [a.id, []],
        [b.id, []],
      ]);
      for (let round = 0; round < 20; round++) {
        const [ca, cb] = await Promise.all([
          ctx.store.claimDue(a.id, 3, T0 + 100),
          ctx.store.claimDue(b.id, 4, T0 + 100, 'sequence'),
        ]);
        claimed.get(a.id)?.push(...(ca?.deliveries ?? []));
        claimed.get(b.id)?.push(...(cb?.deliveries ?? []));
      }
      for (const [id, list] of claimed) {
        assert.deepEqual(
          list.map((d) => d.sequence),
          expected,
          'contiguous, in claim order',
        );
        assert.equal(new Set(list.map((d) => d.id)).size, accepted, 'each delivery claimed once');
        assert.deepEqual(await sequencesOf(id), expected);
      }
    });

    it('two claims of one destination at once (not supposed to happen) still take distinct numbers', async () => {
      const a = await destination();
      await acceptAt(
        a.id,
        Array.from({ length: 30 }, () => T0),
      );
      const claims = await Promise.all(Array.from({ length: 6 }, () => ctx.store.claimDue(a.id, 4, T0 + 1)));
      const all = claims.flatMap((c) => c.deliveries);
      assert.equal(new Set(all.map((d) => d.id)).size, all.length, 'no delivery claimed twice');
      assert.deepEqual(
        all.map((d) => d.sequence).sort((x, y) => x - y),
        Array.from({ length: all.length }, (_, i) => i + 1),
      );
      for (const c of claims) {
        const seqs = c.deliveries.map((d) => d.sequence);
        assert.deepEqual(
          seqs,
          [...seqs].sort((x, y) => x - y),
          'within one claim, in claim order',
        );
      }
    });

    it("fifo claim: first attempts in acceptance order, whatever their due times; 'due' numbers in due order", async () => {
      const fifo = await destination('fifo');
      // Accepted in this order, with due times 30, 10, 20.
      const [s1, s2, s3] = await acceptAt(fifo.id, [T0 + 30, T0 + 10, T0 + 20]);
      const byDue = await destination();
      const [d1, d2, d3] = await acceptAt(byDue.id, [T0 + 30, T0 + 10, T0 + 20]);
      const first = await ctx.store.claimDue(fifo.id, 2, T0 + 100, 'sequence');
      assert.deepEqual(
        first.deliveries.map((d) => [d.id, d.sequence]),
        [
          [s1, 1],
          [s2, 2],
        ],
      );
      assert.equal(first.nextPendingAt, T0 + 20, 'what is left, by due time');
      assert.deepEqual(
        (await ctx.store.claimDue(fifo.id, 2, T0 + 100, 'sequence')).deliveries.map((d) => [
          d.id,
          d.sequence,
        ]),
        [[s3, 3]],
      );
      assert.deepEqual(
        (await ctx.store.claimDue(byDue.id, 3, T0 + 100, 'due')).deliveries.map((d) => [d.id, d.sequence]),
        [
          [d2, 1],
          [d3, 2],
          [d1, 3],
        ],
      );
    });

    it('fifo: a due retry goes out before the first attempts behind it, and does not hold them back', async () => {
      const fifo = await destination('fifo');
      const [one, two, three, four] = await acceptAt(fifo.id, [T0, T0, T0, T0]);
      const [c1] = (await ctx.store.claimDue(fifo.id, 1, T0, 'sequence')).deliveries;
      assert.deepEqual([c1?.id, c1?.sequence], [one, 1]);
      await ctx.store.completeAttempts(
        [completion(c1 as ClaimedDelivery, 'pending', T0, T0 + 1_000)],
        T0 + 5,
      );
      // Not due yet: the next first attempt goes.
      const [c2] = (await ctx.store.claimDue(fifo.id, 1, T0 + 10, 'sequence')).deliveries;
      assert.deepEqual([c2?.id, c2?.sequence], [two, 2]);
      await ctx.store.completeAttempts([completion(c2 as ClaimedDelivery, 'delivered', T0 + 10)], T0 + 15);
      // Due again: the retry (sent before them) goes before the first attempts behind it.
      const claimed = await ctx.store.claimDue(fifo.id, 2, T0 + 1_000, 'sequence');
      assert.deepEqual(
        claimed.deliveries.map((d) => [d.id, d.sequence, d.attempts]),
        [
          [one, 1, 1],
          [three, 3, 0],
        ],
      );
      assert.deepEqual(
        (await claimAll(fifo.id, T0 + 1_000, 'sequence')).map((d) => [d.id, d.sequence]),
        [[four, 4]],
      );
    });

    it('a requeue, a replay and a manual retry keep the sequence', async () => {
      const a = await destination();
      const [one, two] = await acceptAt(a.id, [T0, T0]);
      const first = await claimAll(a.id, T0);
      assert.deepEqual(
        first.map((d) => d.sequence),
        [1, 2],
      );
      // The sweeper returns both to pending (a lost claim); claimed again, they keep their numbers.
      await ctx.store.requeue(T0 + 1, new Set(), T0 + 2);
      const [three] = await acceptAt(a.id, [T0 + 2]);
      const again = await claimAll(a.id, T0 + 2, 'sequence');
      assert.deepEqual(
        again.map((d) => [d.id, d.sequence]),
        [
          [one, 1],
          [two, 2],
          [three, 3],
        ],
      );
      await ctx.store.completeAttempts(
        again.map((c) => completion(c, 'dead', T0 + 3)),
        T0 + 5,
      );
      assert.equal(await ctx.store.replayDead(a.id, null, T0 + 10), 3);
      const replayed = await claimAll(a.id, T0 + 10, 'sequence');
      assert.deepEqual(
        replayed.map((d) => [d.id, d.sequence]),
        [
          [one, 1],
          [two, 2],
          [three, 3],
        ],
      );
      await ctx.store.completeAttempts(
        replayed.map((c) => completion(c, 'dead', T0 + 10)),
        T0 + 15,
      );
      const retried = await ctx.store.retryDelivery(two as string, T0 + 20);
      assert.equal(retried.ok && retried.delivery.sequence, 2);
      const [next] = await acceptAt(a.id, [T0 + 21]);
      assert.deepEqual(
        (await claimAll(a.id, T0 + 21)).map((d) => [d.id, d.sequence]),
        [
          [two, 2],
          [next, 4],
        ],
        'a new delivery goes on from the counter',
      );
    });
  });
}

/**
 * Store conformance, part two: the per-destination sequence and the fifo claim order
 * (docs/adr/0006). Run by `storeConformance` inside its own `describe`, on the same stores.
 *
 * - every delivery takes its destination's next sequence when its event is accepted:
 *   1, 2, 3… per destination, in input order, with no gap (a batch that fails takes none, an
 *   idempotent repeat takes none);
 * - a retry, a replay and a manual retry keep the sequence;
 * - `claimDue(…, 'sequence')` takes due deliveries lowest sequence first; a delivery waiting
 *   for its retry does not hold back the ones behind it.
 */

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { newId } from '@sluice/core';
import type { ClaimedDelivery, CompletedAttempt, Destination, NewEvent, Store, Tenant } from './store.ts';

type OpenStore = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

const T0 = 1_700_000_000_000;

function event(destinationIds: string[], overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    type: 'order.created',
    payload: '{"order":1}',
    idempotencyKey: null,
    destinationIds,
    ...overrides,
  };
}

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
      statusCode: status === 'delivered' ? 200 : 500,
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
    let store: Store;
    let cleanup: () => Promise<void>;
    let tenant: Tenant;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
      tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
      await store.createTenant(tenant, `hash-${tenant.id}`);
    });
    afterEach(async () => {
      await cleanup();
    });

    const destination = (ordering: Destination['ordering'] = 'none'): Promise<Destination> =>
      store.createDestination(
        {
          id: newId('dst'),
          tenantId: tenant.id,
          name: null,
          url: 'https://hooks.example.com/in',
          rateLimit: { limit: 10, period: 'second' },
          maxConcurrency: null,
          adaptive: false,
          ordering,
          eventTypes: ['*'],
          retry: { maxAttempts: 3, initialDelayMs: 1_000, maxDelayMs: 60_000 },
          timeoutMs: 15_000,
          secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', expiresAt: null }],
        },
        T0,
      );

    /** Accepts one event per due time for `destinationId`; returns the delivery ids in order. */
    const acceptAt = async (destinationId: string, dueTimes: number[]): Promise<string[]> => {
      const ids: string[] = [];
      for (const at of dueTimes) {
        const [r] = await store.acceptEvents(tenant.id, [event([destinationId])], at);
        ids.push(r?.event.deliveries[0]?.id ?? assert.fail('no delivery'));
      }
      return ids;
    };

    const sequenceOf = async (deliveryId: string) => (await store.getDelivery(deliveryId))?.delivery.sequence;

    const sequencesOf = async (destinationId: string): Promise<number[]> => {
      const page = await store.listDeliveries({ destinationId }, { limit: 500 });
      return page.items.map((d) => d.sequence).sort((a, b) => a - b);
    };

    it('a destination created with ordering fifo keeps it; a patch changes it', async () => {
      const fifo = await destination('fifo');
      assert.equal((await store.getDestination(fifo.id))?.ordering, 'fifo');
      const plain = await destination();
      assert.equal((await store.getDestination(plain.id))?.ordering, 'none');
      const patched = await store.updateDestination(plain.id, { ordering: 'fifo' }, T0 + 1);
      assert.equal(patched?.ordering, 'fifo');
      assert.equal((await store.getDestination(plain.id))?.ordering, 'fifo');
      const other = await store.updateDestination(fifo.id, { name: 'renamed' }, T0 + 2);
      assert.equal(other?.ordering, 'fifo', 'a patch of another field keeps the ordering');
    });

    it('sequences are 1, 2, 3… per destination, in input order, across batches and fan-out', async () => {
      const a = await destination();
      const b = await destination('fifo');
      const [first, second] = await store.acceptEvents(
        tenant.id,
        [event([a.id, b.id]), event([b.id]), event([a.id])],
        T0,
      );
      const more = await store.acceptEvents(tenant.id, [event([b.id, a.id]), event([a.id])], T0 + 1);
      const ids = [first, second, ...more].flatMap((r) => r?.event.deliveries ?? []);
      const seq = await Promise.all(ids.map(async (d) => [d.destinationId, await sequenceOf(d.id)]));
      assert.deepEqual(seq, [
        [a.id, 1],
        [b.id, 1],
        [b.id, 2],
        [b.id, 3],
        [a.id, 3],
        [a.id, 4],
      ]);
      assert.deepEqual(await sequencesOf(a.id), [1, 2, 3, 4]);
      assert.deepEqual(await sequencesOf(b.id), [1, 2, 3]);
      const claimed = await store.claimDue(a.id, 10, T0 + 1);
      assert.deepEqual(
        claimed.deliveries.map((d) => d.sequence),
        [1, 2, 3, 4],
        'a claimed delivery carries its sequence',
      );
    });

    it('no gap: an idempotent repeat and a failed batch take no sequence', async () => {
      const a = await destination();
      await store.acceptEvents(tenant.id, [event([a.id], { idempotencyKey: 'k' })], T0);
      const [again] = await store.acceptEvents(tenant.id, [event([a.id], { idempotencyKey: 'k' })], T0 + 1);
      assert.equal(again?.replayed, true);
      const broken = event([a.id], { payload: null as unknown as string });
      await assert.rejects(store.acceptEvents(tenant.id, [event([a.id]), broken], T0 + 2));
      const [next] = await store.acceptEvents(tenant.id, [event([a.id])], T0 + 3);
      assert.equal(await sequenceOf(next?.event.deliveries[0]?.id as string), 2);
      assert.deepEqual(await sequencesOf(a.id), [1, 2]);
    });

    it('concurrent accepts for one destination take distinct, contiguous sequences', async () => {
      const a = await destination();
      const b = await destination();
      const batches = Array.from({ length: 20 }, (_, i) =>
        store.acceptEvents(
          tenant.id,
          Array.from({ length: 1 + (i % 3) }, () => event(i % 2 === 0 ? [a.id, b.id] : [b.id, a.id])),
          T0 + i,
        ),
      );
      const accepted = (await Promise.all(batches)).flat().length;
      const expected = Array.from({ length: accepted }, (_, i) => i + 1);
      assert.deepEqual(await sequencesOf(a.id), expected);
      assert.deepEqual(await sequencesOf(b.id), expected);
    });

    it("claimDue by sequence: lowest sequence first, whatever the due times; 'due' keeps due order", async () => {
      const fifo = await destination('fifo');
      // Sequences 1, 2, 3 with due times 30, 10, 20.
      const [s1, s2, s3] = await acceptAt(fifo.id, [T0 + 30, T0 + 10, T0 + 20]);
      const byDue = await destination();
      const [d1, d2, d3] = await acceptAt(byDue.id, [T0 + 30, T0 + 10, T0 + 20]);
      const first = await store.claimDue(fifo.id, 2, T0 + 100, 'sequence');
      assert.deepEqual(
        first.deliveries.map((d) => d.id),
        [s1, s2],
      );
      assert.equal(first.nextPendingAt, T0 + 20, 'what is left, by due time');
      assert.deepEqual(
        (await store.claimDue(fifo.id, 2, T0 + 100, 'sequence')).deliveries.map((d) => d.id),
        [s3],
      );
      assert.deepEqual(
        (await store.claimDue(byDue.id, 3, T0 + 100, 'due')).deliveries.map((d) => d.id),
        [d2, d3, d1],
      );
    });

    it('a delivery waiting for its retry does not hold back the ones behind it; it keeps its sequence', async () => {
      const fifo = await destination('fifo');
      const [one, two, three] = await acceptAt(fifo.id, [T0, T0, T0]);
      const [c1] = (await store.claimDue(fifo.id, 1, T0, 'sequence')).deliveries;
      assert.equal(c1?.id, one);
      await store.completeAttempts([completion(c1 as ClaimedDelivery, 'pending', T0, T0 + 1_000)], T0 + 5);
      // Not due yet: the next in sequence goes.
      const [c2] = (await store.claimDue(fifo.id, 1, T0 + 10, 'sequence')).deliveries;
      assert.equal(c2?.id, two);
      await store.completeAttempts([completion(c2 as ClaimedDelivery, 'delivered', T0 + 10)], T0 + 15);
      // Due again: the retry (lower sequence) goes before the first attempt behind it.
      const claimed = await store.claimDue(fifo.id, 2, T0 + 1_000, 'sequence');
      assert.deepEqual(
        claimed.deliveries.map((d) => [d.id, d.sequence, d.attempts]),
        [
          [one, 1, 1],
          [three, 3, 0],
        ],
      );
    });

    it('a replay and a manual retry keep the sequence', async () => {
      const a = await destination();
      const [one, two] = await acceptAt(a.id, [T0, T0]);
      const claimed = (await store.claimDue(a.id, 2, T0)).deliveries;
      await store.completeAttempts(
        claimed.map((c) => completion(c, 'dead', T0)),
        T0 + 5,
      );
      assert.equal(await store.replayDead(a.id, null, T0 + 10), 2);
      const again = (await store.claimDue(a.id, 2, T0 + 10, 'sequence')).deliveries;
      assert.deepEqual(
        again.map((d) => [d.id, d.sequence]),
        [
          [one, 1],
          [two, 2],
        ],
      );
      await store.completeAttempts(
        again.map((c) => completion(c, 'dead', T0 + 10)),
        T0 + 15,
      );
      const retried = await store.retryDelivery(two as string, T0 + 20);
      assert.equal(retried.ok && retried.delivery.sequence, 2);
    });
  });
}

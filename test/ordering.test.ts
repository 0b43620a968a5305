/**
 * Best-effort FIFO per destination (`ordering: "fifo"`) and the `webhook-sequence` /
 * `webhook-attempt` headers (docs/adr/0006, docs/receivers.md), judged at the receiver:
 *
 * - a fifo destination under load, with a receiver that fails about one request in six:
 *   every event delivered exactly once as 2xx; first attempts arrive in strictly increasing
 *   sequence, and in the order the events were accepted; sequences are 1..N with no gap;
 *   attempts count 1, 2, 3… per event; the rate limit holds in every sliding second;
 * - a destination without ordering carries both headers too, and they do not disturb the
 *   Standard Webhooks signature; a delivery has no sequence until it is first sent (the API
 *   shows null while its destination is paused); `ordering` is settable at create and PATCH,
 *   and a bad value is a 400 that changes nothing;
 * - a PATCH to fifo and back is in force for the events that follow: one request open at a
 *   time in sequence order, then several at once again.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Delivery, type Sluice, SluiceError } from '@sluice/client';
import { Webhook } from 'standardwebhooks';
import { collect, fileBox, maxOverlap } from './helpers/client.ts';
import { type Arrival, type Reply, sleep } from './helpers/receiver.ts';
import { describeWindow, worstWindow } from './helpers/window.ts';

const get = fileBox();
/** One tick of a per-second limit, and a margin. */
const TICK_MS = 1_100;

const header = (a: Arrival, name: string): string => {
  const value = a.headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};
const sequenceOf = (a: Arrival) => Number(header(a, 'webhook-sequence'));
const attemptOf = (a: Arrival) => Number(header(a, 'webhook-attempt'));
const ok = (a: Arrival) => a.status !== null && a.status >= 200 && a.status < 300;

/** A seeded stream of replies: 500 with probability `failure`, else 200. */
function flakyReplies(n: number, failure: number, seed: number): Reply[] {
  let state = seed >>> 0;
  const random = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  return Array.from({ length: n }, () => (random() < failure ? 500 : 200));
}

async function deliveriesOf(api: Sluice, destinationId: string): Promise<Delivery[]> {
  return collect(api.deliveries.listAll({ destinationId, limit: 500 }));
}

describe('ordering', () => {
  it('fifo under load with injected failures: first attempts in sequence order, every event once, the limit held', {
    timeout: 180_000,
  }, async () => {
    const { api } = await get().tenant('fifo');
    const rcv = get().rcv;
    const path = rcv.path('fifo');
    const N = 300;
    const LIMIT = 50;
    await rcv.script(path, flakyReplies(2 * N, 0.15, 42));
    const dst = await api.destinations.create({
      url: rcv.url('fifo'),
      rateLimit: { limit: LIMIT, period: 'second' },
      ordering: 'fifo',
      retry: { maxAttempts: 20, initialDelayMs: 100, maxDelayMs: 400 },
    });
    assert.equal(dst.ordering, 'fifo');
    assert.equal((await api.destinations.get(dst.id)).ordering, 'fifo', 'GET returns it');

    // A third one at a time, a third sixteen at once, a third in two batches.
    const event = (i: number) => ({ type: 'order.updated', payload: { i }, destinationId: dst.id });
    const ids: string[] = [];
    for (let i = 0; i < N / 3; i++) ids.push((await api.events.send(event(i))).id);
    let next = N / 3;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < (2 * N) / 3) ids.push((await api.events.send(event(next++))).id);
      }),
    );
    for (const half of [0, 1]) {
      const from = (2 * N) / 3 + (half * N) / 6;
      const batch = Array.from({ length: N / 6 }, (_, k) => event(from + k));
      ids.push(...(await api.events.sendBatch(batch)).data.map((e) => e.id));
    }
    assert.equal(new Set(ids).size, N);

    await rcv.waitFor(
      () => rcv.deliveredIds(path).size === N,
      150_000,
      `all ${N} events delivered (${rcv.deliveredIds(path).size} so far)`,
    );
    const arrivals = rcv.arrivals(path);
    const failures = arrivals.filter((a) => !ok(a)).length;
    assert.ok(failures >= 10, `only ${failures} failed requests: the test injected too few failures`);

    // Every event delivered exactly once as 2xx, and nothing else arrived.
    const delivered = new Map<string, number>();
    for (const a of arrivals.filter(ok)) {
      const id = header(a, 'webhook-id');
      delivered.set(id, (delivered.get(id) ?? 0) + 1);
    }
    assert.deepEqual(new Set(delivered.keys()), new Set(ids));
    assert.ok(
      [...delivered.values()].every((n) => n === 1),
      'no event got two 2xx answers',
    );

    // First attempts arrive in strictly increasing sequence.
    const firsts = arrivals.filter((a) => attemptOf(a) === 1);
    assert.equal(firsts.length, N, 'one first attempt per event');
    for (let i = 1; i < firsts.length; i++) {
      const [before, after] = [sequenceOf(firsts[i - 1] as Arrival), sequenceOf(firsts[i] as Arrival)];
      assert.ok(after > before, `first attempt #${i} has sequence ${after} after ${before}`);
    }

    // Sequences are 1..N, one per event, kept across its retries; attempts count 1, 2, 3…
    const byEvent = new Map<string, Arrival[]>();
    for (const a of arrivals) {
      const id = header(a, 'webhook-id');
      byEvent.set(id, [...(byEvent.get(id) ?? []), a]);
    }
    const sequences = new Set<number>();
    let retried = 0;
    for (const [id, tries] of byEvent) {
      const seqs = new Set(tries.map(sequenceOf));
      assert.equal(seqs.size, 1, `event ${id} kept one sequence: ${[...seqs]}`);
      sequences.add(sequenceOf(tries[0] as Arrival));
      assert.deepEqual(
        tries.map(attemptOf),
        tries.map((_, k) => k + 1),
        `event ${id}: webhook-attempt counts its requests`,
      );
      assert.ok(ok(tries.at(-1) as Arrival) && tries.slice(0, -1).every((a) => !ok(a)));
      if (tries.length > 1) retried++;
    }
    assert.deepEqual(
      [...sequences].sort((a, b) => a - b),
      Array.from({ length: N }, (_, i) => i + 1),
      'sequences 1..N, no gap',
    );
    assert.ok(retried > 0, 'some events were retried');

    // The API shows the same sequence on each delivery. A fifo destination numbers its first
    // attempts in the order their events were accepted: the ones posted one after another and
    // the batches in that order, the ones posted sixteen at once among themselves.
    const deliveries = await deliveriesOf(api, dst.id);
    const bySequence = new Map(deliveries.map((d) => [d.eventId, d.sequence]));
    for (const [id, tries] of byEvent) assert.equal(bySequence.get(id), sequenceOf(tries[0] as Arrival));
    const numbered = (from: number, to: number) => ids.slice(from, to).map((id) => bySequence.get(id));
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i + 1);
    assert.deepEqual(numbered(0, N / 3), range(0, N / 3), 'events posted one after another, in that order');
    assert.deepEqual(
      numbered(N / 3, (2 * N) / 3).sort((a, b) => (a as number) - (b as number)),
      range(N / 3, (2 * N) / 3),
      'events posted at once, after those and before the batches',
    );
    assert.deepEqual(numbered((2 * N) / 3, N), range((2 * N) / 3, N), 'the batches, in their order');

    const times = rcv.times(path);
    const worst = worstWindow(times, 1_000);
    assert.ok(worst.count <= LIMIT, describeWindow(worst, 1_000, times[0] as number));
    // One request at a time, but not one per tick (1 s): a finished request sends the next.
    assert.ok(worst.count >= 5, `at most ${worst.count} in any second: the fifo went at the tick's pace`);
  });

  it('a destination without ordering carries both headers, outside the signature; ordering is patchable', {
    timeout: 60_000,
  }, async () => {
    const { api } = await get().tenant('plain');
    const rcv = get().rcv;
    const path = rcv.path('plain');
    await rcv.script(path, [503]);
    const dst = await api.destinations.create({
      url: rcv.url('plain'),
      rateLimit: { limit: 20, period: 'second' },
      retry: { maxAttempts: 5, initialDelayMs: 50, maxDelayMs: 200 },
    });
    assert.equal(dst.ordering, 'none', 'the default');
    // No sequence until a delivery is first sent: none while the destination is paused.
    await api.destinations.pause(dst.id);
    const sent = await api.events.sendBatch(
      Array.from({ length: 5 }, (_, i) => ({ type: 'order.paid', payload: { i }, destinationId: dst.id })),
    );
    const ids = sent.data.map((e) => e.id);
    const unsent = await deliveriesOf(api, dst.id);
    assert.equal(unsent.length, 5);
    assert.ok(
      unsent.every((d) => d.status === 'pending' && d.sequence === null),
      `paused: pending, no sequence yet: ${JSON.stringify(unsent.map((d) => [d.status, d.sequence]))}`,
    );
    assert.equal((await api.deliveries.get(unsent[0]?.id as string)).sequence, null);
    await api.destinations.resume(dst.id);
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 5, 30_000, 'all 5 delivered');
    const arrivals = rcv.arrivals(path);
    assert.equal(arrivals.length, 6, 'five events, one of them retried once');
    for (const a of arrivals) {
      assert.match(header(a, 'webhook-sequence'), /^[1-5]$/);
      assert.match(header(a, 'webhook-attempt'), /^[12]$/);
      // The extra headers change nothing for a Standard Webhooks verifier.
      const verified = new Webhook(dst.secret).verify(a.body, a.headers as Record<string, string>);
      assert.deepEqual(verified, JSON.parse(a.body));
    }
    const [failed] = arrivals;
    const retry = arrivals.find(
      (a, k) => k > 0 && header(a, 'webhook-id') === header(failed as Arrival, 'webhook-id'),
    );
    assert.ok(retry, 'the failed event was retried');
    assert.equal(attemptOf(failed as Arrival), 1);
    assert.equal(attemptOf(retry), 2);
    assert.equal(sequenceOf(retry), sequenceOf(failed as Arrival), 'a retry keeps its sequence');
    const deliveries = await deliveriesOf(api, dst.id);
    assert.deepEqual(
      ids.map((id) => deliveries.find((d) => d.eventId === id)?.sequence),
      [1, 2, 3, 4, 5],
      'a batch is numbered in its order (claimed oldest due first, then in acceptance order)',
    );

    // Settable by PATCH; a bad value is a 400 that changes nothing.
    assert.equal((await api.destinations.update(dst.id, { ordering: 'fifo' })).ordering, 'fifo');
    const bad = await api.destinations.update(dst.id, { ordering: 'lifo' as 'fifo' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(bad instanceof SluiceError && bad.status === 400 && bad.code === 'validation_failed');
    assert.equal((await api.destinations.get(dst.id)).ordering, 'fifo');
    assert.equal((await api.destinations.update(dst.id, { ordering: 'none' })).ordering, 'none');
  });

  it('a PATCH to fifo and back applies to the events that follow', { timeout: 60_000 }, async () => {
    const { api } = await get().tenant('switch');
    const rcv = get().rcv;
    const path = rcv.path('switch');
    const DELAY = 60;
    await rcv.setDelay(path, DELAY);
    const dst = await api.destinations.create({
      url: rcv.url('switch'),
      rateLimit: { limit: 200, period: 'second' },
    });
    const burst = (from: number) =>
      api.events.sendBatch(
        Array.from({ length: 15 }, (_, i) => ({
          type: 'order.paid',
          payload: { i: from + i },
          destinationId: dst.id,
        })),
      );
    // Each request is open at the receiver at least [arrival, arrival + DELAY): its answer waits
    // DELAY, and a fifo destination starts the next only once it has the answer.
    const openAtOnce = (arrivals: Arrival[]) =>
      maxOverlap(arrivals.map((a) => ({ start: a.at, end: a.at + DELAY })));

    // In force within one tick (docs/design.md I5): the distributed shape's processes learn of the
    // change by pub/sub, so the burst waits one interval.
    await api.destinations.update(dst.id, { ordering: 'fifo' });
    await sleep(TICK_MS);
    await burst(0);
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 15, 20_000, 'the fifo burst');
    const fifo = rcv.arrivals(path);
    assert.equal(openAtOnce(fifo), 1, 'fifo: one request open at a time');
    assert.deepEqual(
      fifo.map(sequenceOf),
      Array.from({ length: 15 }, (_, i) => i + 1),
    );

    await api.destinations.update(dst.id, { ordering: 'none' });
    await sleep(TICK_MS);
    await burst(15);
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 30, 20_000, 'the second burst');
    const after = rcv.arrivals(path).slice(15);
    assert.ok(openAtOnce(after) > 1, 'without fifo, several requests at once again');
    assert.deepEqual(
      after.map(sequenceOf).sort((a, b) => a - b),
      Array.from({ length: 15 }, (_, i) => 16 + i),
    );
  });
});

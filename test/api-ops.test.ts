/**
 * Operating a destination through the API, judged at the receiver: `maxConcurrency`
 * (requests open at the receiver never above it, the rate limit holding too); pause (keeps
 * accepting, sends nothing) and resume (the backlog goes out, the limit holding across);
 * DELETE (undelivered deliveries cancelled, nothing sent after); replay of dead deliveries,
 * with and without `since`; a manual retry; `eventTypes` fan-out with exact types and
 * `prefix.*`.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Delivery, Sluice } from '@sluice/client';
import { collect, fileBox, maxOverlap } from './helpers/client.ts';
import { sleep } from './helpers/receiver.ts';
import { waitUntil } from './helpers/sluice.ts';
import { describeWindow, worstWindow } from './helpers/window.ts';

const get = fileBox();

async function deliveriesOf(api: Sluice, destinationId: string): Promise<Delivery[]> {
  return collect(api.deliveries.listAll({ destinationId, limit: 500 }));
}

async function allSettled(
  api: Sluice,
  destinationId: string,
  status: Delivery['status'],
  n: number,
  timeoutMs = 30_000,
) {
  return waitUntil(
    async () => {
      const ds = await deliveriesOf(api, destinationId);
      return ds.length === n && ds.every((d) => d.status === status) ? ds : undefined;
    },
    timeoutMs,
    `${n} deliveries of ${destinationId} to be ${status}`,
  );
}

const events = (n: number, destinationId: string, type = 'ops.test') =>
  Array.from({ length: n }, (_, i) => ({ type, payload: { i }, destinationId }));

describe('operations', () => {
  it('maxConcurrency: open requests at the receiver never above it; the rate limit holds', {
    timeout: 60_000,
  }, async () => {
    const { api } = await get().tenant('concurrency');
    const rcv = get().rcv;
    const path = rcv.path('slow');
    const DELAY = 400;
    await rcv.setDelay(path, DELAY);
    const rateLimit = { limit: 10, period: 'second' } as const;
    const dst = await api.destinations.create({ url: rcv.url('slow'), rateLimit, maxConcurrency: 3 });
    const sent = await api.events.sendBatch(events(24, dst.id));
    const ids = new Set(sent.data.map((e) => e.id));
    let mostInFlight = 0;
    await rcv.waitFor(
      () => {
        void api.destinations.stats(dst.id, { seconds: 10 }).then((s) => {
          mostInFlight = Math.max(mostInFlight, s.inFlight);
        });
        return [...ids].every((id) => rcv.deliveredIds(path).has(id));
      },
      30_000,
      'all 24 to arrive',
    );
    const times = rcv.times(path);
    assert.equal(times.length, 24, 'one request per event');
    // Each request is open at the receiver at least [arrival, arrival + DELAY): its answer
    // waits DELAY after the body, and the next request can only start once Sluice has it.
    const open = maxOverlap(times.map((t) => ({ start: t, end: t + DELAY })));
    assert.ok(open <= 3, `${open} requests open at once with maxConcurrency 3`);
    assert.equal(open, 3, 'the concurrency was used up (else this test shows nothing)');
    assert.ok(mostInFlight <= 3, `stats showed ${mostInFlight} in flight`);
    const worst = worstWindow(times, 1_000);
    assert.ok(worst.count <= rateLimit.limit, describeWindow(worst, 1_000, times[0]!));
  });

  it('maxConcurrency does not hold a destination to one cap per tick: freed slots send again', {
    timeout: 30_000,
  }, async () => {
    const { api } = await get().tenant('cap-refill');
    const rcv = get().rcv;
    const path = rcv.path('cap-refill');
    const dst = await api.destinations.create({
      url: rcv.url('cap-refill'),
      rateLimit: { limit: 20, period: 'second' },
      maxConcurrency: 5,
    });
    await api.events.sendBatch(events(60, dst.id));
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 60, 20_000, 'all 60 to arrive');
    const times = rcv.times(path);
    const worst = worstWindow(times, 1_000);
    // The receiver answers at once, so slots free up within the second: the rate, not the
    // cap, bounds a second. Were every freed slot to wait for the next tick, a second would
    // hold at most two ticks' worth (2 × 5).
    assert.ok(worst.count > 10, `at most ${worst.count} in any second: the cap held the rate down`);
    assert.ok(worst.count <= 20, describeWindow(worst, 1_000, times[0]!));
  });

  it('maxConcurrency 1: strictly one request at a time', { timeout: 30_000 }, async () => {
    const { api } = await get().tenant('serial');
    const rcv = get().rcv;
    const path = rcv.path('serial');
    await rcv.setDelay(path, 150);
    const dst = await api.destinations.create({
      url: rcv.url('serial'),
      rateLimit: { limit: 1_000, period: 'second' },
      maxConcurrency: 1,
    });
    await api.events.sendBatch(events(8, dst.id));
    await rcv.waitFor(
      () => rcv.arrivals(path).filter((a) => a.status === 200).length === 8,
      20_000,
      '8 answers',
    );
    const times = rcv.times(path);
    for (let i = 1; i < times.length; i++) {
      assert.ok(
        times[i]! - times[i - 1]! >= 150,
        `request ${i} started ${times[i]! - times[i - 1]!} ms after the one before`,
      );
    }
  });

  it('pause keeps accepting and sends nothing; resume sends the backlog within the limit', {
    timeout: 60_000,
  }, async () => {
    const { api } = await get().tenant('pause');
    const rcv = get().rcv;
    const path = rcv.path('pause');
    const rateLimit = { limit: 4, period: 'second' } as const;
    const dst = await api.destinations.create({ url: rcv.url('pause'), rateLimit });
    const first = await api.events.sendBatch(events(10, dst.id));
    await rcv.waitFor(() => rcv.arrivals(path).length >= 4, 10_000, 'the first arrivals');
    await api.destinations.pause(dst.id);
    const pausedAt = Date.now();
    // Accepting goes on while paused.
    const more = await Promise.all(events(6, dst.id).map((e) => api.events.send(e)));
    await sleep(2_000);
    const late = rcv.arrivals(path).filter((a) => a.at > pausedAt + 200);
    assert.deepEqual(
      late.map((a) => a.at - pausedAt),
      [],
      'nothing sent while paused (200 ms grace for a request already started)',
    );
    const sentBefore = rcv.arrivals(path).length;
    assert.ok(sentBefore < 10, `the pause stopped the stream (${sentBefore} sent)`);
    const stats = await api.destinations.stats(dst.id, { seconds: 60 });
    assert.equal(stats.state, 'paused');
    assert.equal(stats.pending, 16 - sentBefore, 'the rest waits, pending');
    assert.ok(stats.oldestPendingAgeMs >= 2_000);

    await api.destinations.resume(dst.id);
    const all = [...first.data, ...more].map((e) => e.id);
    await rcv.waitFor(() => all.every((id) => rcv.deliveredIds(path).has(id)), 30_000, 'the backlog');
    const arrivals = rcv.arrivals(path);
    assert.equal(arrivals.length, 16, 'each event once');
    assert.equal(new Set(arrivals.map((a) => a.headers['webhook-id'])).size, 16);
    const times = rcv.times(path);
    const worst = worstWindow(times, 1_000);
    assert.ok(
      worst.count <= rateLimit.limit,
      `across pause and resume: ${describeWindow(worst, 1_000, times[0]!)}`,
    );
    await allSettled(api, dst.id, 'delivered', 16);
  });

  it('DELETE cancels the undelivered deliveries; nothing is sent after', { timeout: 60_000 }, async () => {
    const { api } = await get().tenant('delete');
    const rcv = get().rcv;
    const path = rcv.path('delete');
    await rcv.script(path, [200, 500]);
    const dst = await api.destinations.create({
      url: rcv.url('delete'),
      rateLimit: { limit: 2, period: 'second' },
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    const sent = await api.events.sendBatch(events(12, dst.id));
    await rcv.waitFor(
      () => rcv.arrivals(path).filter((a) => a.status !== null).length >= 3,
      10_000,
      'three answers',
    );
    // The first two requests leave side by side: which one the 500 went to is the receiver's
    // to say, not the order of the events.
    const answered = (status: number) => {
      const a = rcv.arrivals(path).find((x) => x.status === status);
      const e = sent.data.find((x) => x.id === String(a?.headers['webhook-id']));
      return e?.deliveries[0]?.id ?? assert.fail(`no request answered ${status}`);
    };
    const delivered = answered(200);
    const dead = answered(500);
    await waitUntil(async () => (await api.deliveries.get(dead!)).status === 'dead', 10_000, 'the dead one');
    await api.destinations.delete(dst.id);
    const deletedAt = Date.now();
    await sleep(1_500);
    const late = rcv.arrivals(path).filter((a) => a.at > deletedAt + 200);
    assert.deepEqual(
      late.map((a) => a.at - deletedAt),
      [],
      'nothing sent after the delete',
    );
    const byId = new Map(sent.data.map((e) => [e.deliveries[0]!.id, e.id]));
    const arrived = new Set(rcv.arrivals(path).map((a) => String(a.headers['webhook-id'])));
    const statuses: Record<string, string> = {};
    for (const id of byId.keys()) statuses[id] = (await api.deliveries.get(id)).status;
    assert.equal(statuses[delivered!], 'delivered', 'a delivered one stays delivered');
    assert.equal(statuses[dead!], 'cancelled', 'a dead one is undelivered: cancelled');
    for (const [id, eventId] of byId) {
      if (arrived.has(eventId) && statuses[id] === 'delivered') continue;
      assert.equal(statuses[id], 'cancelled', `${id} (arrived: ${arrived.has(eventId)})`);
    }
    assert.ok(Object.values(statuses).filter((s) => s === 'cancelled').length >= 8);
    const fanned = await api.events.send({ type: 'ops.test', payload: {} });
    assert.deepEqual(fanned.deliveries, [], 'a deleted destination takes no new events');
    const err = await api.deliveries.retry(dead!).catch((e: unknown) => e);
    assert.equal((err as { status?: number }).status, 409, 'a cancelled delivery cannot be retried');
  });

  it('replay puts dead deliveries back: those since a time, then all', { timeout: 60_000 }, async () => {
    const { api } = await get().tenant('replay');
    const rcv = get().rcv;
    const path = rcv.path('replay');
    // A refusal the receiver answers: every 5xx at once would be an outage, held by the
    // circuit breaker instead of dead (docs/adr/0007).
    await rcv.setDefault(path, 422);
    const dst = await api.destinations.create({
      url: rcv.url('replay'),
      rateLimit: { limit: 50, period: 'second' },
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    const early = await api.events.sendBatch(events(3, dst.id));
    await allSettled(api, dst.id, 'dead', 3);
    await sleep(20);
    const since = new Date().toISOString();
    await sleep(20);
    const later = await api.events.sendBatch(events(2, dst.id));
    await allSettled(api, dst.id, 'dead', 5);
    await rcv.setDefault(path, 200);

    assert.deepEqual(await api.destinations.replay(dst.id, { since }), { count: 2 });
    const laterIds = later.data.map((e) => e.deliveries[0]!.id);
    const earlyIds = early.data.map((e) => e.deliveries[0]!.id);
    await waitUntil(
      async () =>
        (await Promise.all(laterIds.map((id) => api.deliveries.get(id)))).every(
          (d) => d.status === 'delivered',
        ),
      15_000,
      'the later ones delivered',
    );
    await sleep(300);
    for (const id of earlyIds)
      assert.equal((await api.deliveries.get(id)).status, 'dead', `${id}: died before since`);
    for (const id of laterIds) {
      const d = await api.deliveries.get(id);
      assert.deepEqual(
        d.attempts.map((a) => a.statusCode),
        [422, 200],
      );
    }

    assert.deepEqual(await api.destinations.replay(dst.id), { count: 3 });
    await allSettled(api, dst.id, 'delivered', 5);
    assert.deepEqual(await api.destinations.replay(dst.id), { count: 0 }, 'nothing dead is left');
    const ids = [...early.data, ...later.data].map((e) => e.id);
    assert.ok(ids.every((id) => rcv.deliveredIds(path).has(id)));
  });

  it('a manual retry: a dead delivery goes out again; a pending one goes out now', {
    timeout: 60_000,
  }, async () => {
    const { api } = await get().tenant('retry');
    const rcv = get().rcv;
    const path = rcv.path('retry');
    await rcv.setDefault(path, 500);
    const dies = await api.destinations.create({
      url: rcv.url('retry'),
      rateLimit: { limit: 10, period: 'second' },
      retry: { maxAttempts: 2, initialDelayMs: 50, maxDelayMs: 50 },
    });
    const [e] = (await api.events.sendBatch(events(1, dies.id))).data;
    const dlv = e!.deliveries[0]!.id;
    await allSettled(api, dies.id, 'dead', 1);
    await rcv.setDefault(path, 200);
    const retried = await api.deliveries.retry(dlv);
    assert.equal(retried.status, 'pending');
    const d = await waitUntil(
      async () => {
        const found = await api.deliveries.get(dlv);
        return found.status === 'delivered' ? found : undefined;
      },
      15_000,
      'the retried delivery',
    );
    assert.deepEqual(
      d.attempts.map((a) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 500],
        [3, 200],
      ],
    );

    // A pending delivery waiting out a long backoff: a retry sends it now.
    const path2 = rcv.path('backoff');
    await rcv.script(path2, [500]);
    const waits = await api.destinations.create({
      url: rcv.url('backoff'),
      rateLimit: { limit: 10, period: 'second' },
      // Full jitter draws the backoff from [0, delay]: a day makes a short one (which this
      // test could not tell from a retry) vanishingly unlikely.
      retry: { maxAttempts: 5, initialDelayMs: 86_400_000, maxDelayMs: 86_400_000 },
    });
    const sent = await api.events.send({ type: 'x', payload: {}, destinationId: waits.id });
    const pending = sent.deliveries[0]!.id;
    await rcv.waitFor(() => rcv.arrivals(path2).some((a) => a.status === 500), 10_000, 'the first attempt');
    const before = await waitUntil(
      async () => {
        const found = await api.deliveries.get(pending);
        return found.attemptCount === 1 ? found : undefined;
      },
      10_000,
      'the failure recorded',
    );
    assert.equal(before.status, 'pending');
    assert.ok(Date.parse(before.nextAttemptAt!) > Date.now() + 5_000, `backing off: ${before.nextAttemptAt}`);
    await api.deliveries.retry(pending);
    await rcv.waitFor(() => rcv.deliveredIds(path2).has(sent.id), 10_000, 'the retry, now');
  });

  it('eventTypes: exact types and prefix.* choose the destinations of a fan-out', {
    timeout: 60_000,
  }, async () => {
    const { api } = await get().tenant('types');
    const rcv = get().rcv;
    const filters: Record<string, string[]> = {
      exact: ['order.paid'],
      prefix: ['order.*'],
      all: ['*'],
      mixed: ['invoice.*', 'order.refunded'],
      deep: ['order.item.*'],
    };
    const ids: Record<string, string> = {};
    for (const [name, eventTypes] of Object.entries(filters)) {
      ids[name] = (
        await api.destinations.create({
          url: rcv.url(`t-${name}`),
          rateLimit: { limit: 100, period: 'second' },
          eventTypes,
        })
      ).id;
    }
    const expected: [string, string[]][] = [
      ['order.paid', ['exact', 'prefix', 'all']],
      ['order.refunded', ['prefix', 'all', 'mixed']],
      ['order.item.added', ['prefix', 'all', 'deep']],
      ['order', ['all']],
      ['orders.paid', ['all']],
      ['order.paid.late', ['prefix', 'all']],
      ['invoice.sent', ['all', 'mixed']],
      ['user.created', ['all']],
    ];
    const sentIds = new Map<string, string>();
    for (const [type, names] of expected) {
      const sent = await api.events.send({ type, payload: { type } });
      sentIds.set(type, sent.id);
      assert.deepEqual(
        sent.deliveries.map((d) => d.destinationId).sort(),
        names.map((n) => ids[n]).sort(),
        `${type} → ${names.join(', ')}`,
      );
    }
    const named = await api.events.send({ type: 'user.created', payload: {}, destinationId: ids.exact! });
    assert.deepEqual(
      named.deliveries.map((d) => d.destinationId),
      [ids.exact],
      'a named destination gets the event whatever its eventTypes',
    );
    const total = expected.reduce((n, [, names]) => n + names.length, 0) + 1;
    await rcv.waitFor(
      () =>
        Object.keys(filters).reduce((n, name) => n + rcv.deliveredIds(rcv.path(`t-${name}`)).size, 0) ===
        total,
      20_000,
      'every fan-out delivered',
    );
    for (const [type, names] of expected) {
      for (const name of Object.keys(filters)) {
        const got = rcv
          .arrivals(rcv.path(`t-${name}`))
          .filter((a) => a.headers['webhook-id'] === sentIds.get(type));
        assert.equal(got.length, names.includes(name) ? 1 : 0, `${type} at ${name}`);
        for (const a of got) assert.equal(a.headers['webhook-event-type'], type);
      }
    }

    await api.destinations.update(ids.exact!, { eventTypes: ['user.*'] });
    const after = await api.events.send({ type: 'user.deleted', payload: {} });
    assert.deepEqual(
      after.deliveries.map((d) => d.destinationId).sort(),
      [ids.exact, ids.all].sort(),
      'a PATCH of eventTypes holds at once',
    );
  });
});

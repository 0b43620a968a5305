/**
 * Destination filters (docs/api.md "Filters"), in the shape under test: a filtered-out event
 * makes no delivery (the receiver gets nothing, the accepted answer names no delivery for it,
 * the destination's stats count nothing and its limit is not used); a filter changed live
 * applies to the events accepted after the change; a bad filter is refused at its path,
 * naming the operator.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileBox } from './helpers/client.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

describe('destination filters', () => {
  it('only matching events make deliveries; the others cost the destination nothing', async () => {
    const box = get();
    const { api } = await box.tenant('filters');
    const filtered = await api.destinations.create({
      url: box.rcv.url('big-eur-usd'),
      // One a second: twenty filtered-out events before the matching one must not delay it.
      rateLimit: { limit: 1, period: 'second' },
      eventTypes: ['order.*'],
      filter: { 'payload.amount': { $gte: 100 }, 'payload.currency': { $in: ['EUR', 'USD'] } },
    });
    assert.deepEqual(filtered.filter, {
      'payload.amount': { $gte: 100 },
      'payload.currency': { $in: ['EUR', 'USD'] },
    });
    const all = await api.destinations.create({
      url: box.rcv.url('everything'),
      rateLimit: { limit: 100, period: 'second' },
      eventTypes: ['order.*'],
    });
    const misses = [];
    for (let n = 0; n < 20; n++)
      misses.push(
        await api.events.send({
          type: 'order.paid',
          payload: { n, amount: n % 2 === 0 ? 50 : 500, currency: n % 2 === 0 ? 'EUR' : 'GBP' },
        }),
      );
    for (const e of misses)
      assert.deepEqual(
        e.deliveries.map((d) => d.destinationId),
        [all.id],
        'no delivery for the filtered destination',
      );
    const hit = await api.events.send({ type: 'order.paid', payload: { amount: 120, currency: 'USD' } });
    assert.deepEqual(hit.deliveries.map((d) => d.destinationId).sort(), [filtered.id, all.id].sort());
    const postedAt = Date.now();
    await box.rcv.waitFor(
      () => box.rcv.deliveredIds(box.rcv.path('big-eur-usd')).has(hit.id),
      10_000,
      'the hit',
    );
    assert.ok(Date.now() - postedAt < 3_000, 'the limit of one a second was not spent on the others');
    await box.rcv.waitFor(
      () => box.rcv.deliveredIds(box.rcv.path('everything')).size === 21,
      20_000,
      'all 21',
    );
    assert.deepEqual([...box.rcv.deliveredIds(box.rcv.path('big-eur-usd'))], [hit.id]);
    // The outcome is written a moment after the receiver answered.
    const stats = await waitUntil(
      async () => {
        const s = await api.destinations.stats(filtered.id);
        return s.delivered > 0 ? s : undefined;
      },
      10_000,
      'the delivery recorded',
    );
    assert.equal(stats.delivered, 1, 'the stats count the one delivery only');
    assert.equal((await api.deliveries.list({ destinationId: filtered.id })).data.length, 1);
  });

  it('a filter changed live applies to the events accepted after it; null removes it', async () => {
    const box = get();
    const { api } = await box.tenant('live');
    const d = await api.destinations.create({
      url: box.rcv.url('live'),
      rateLimit: { limit: 100, period: 'second' },
      filter: { 'payload.region': 'eu' },
    });
    const before = await api.events.send({ type: 'user.created', payload: { region: 'us' } });
    assert.equal(before.deliveries.length, 0);
    const changed = await api.destinations.update(d.id, {
      filter: { 'payload.region': { $in: ['eu', 'us'] } },
    });
    assert.deepEqual(changed.filter, { 'payload.region': { $in: ['eu', 'us'] } });
    const after = await api.events.send({ type: 'user.created', payload: { region: 'us' } });
    assert.equal(after.deliveries.length, 1);
    await api.destinations.update(d.id, { filter: null });
    const unfiltered = await api.events.send({ type: 'user.created', payload: { region: 'apac' } });
    assert.equal(unfiltered.deliveries.length, 1);
    await waitUntil(
      async () => box.rcv.deliveredIds(box.rcv.path('live')).size === 2,
      20_000,
      'the two events after the change',
    );
    assert.ok(
      !box.rcv.deliveredIds(box.rcv.path('live')).has(before.id),
      'the one before the change never goes',
    );
  });

  it('refuses a bad filter at its path, naming the operator, and changes nothing', async () => {
    const box = get();
    const { tenant } = await box.tenant('bad-filter');
    for (const [filter, words] of [
      [{ $where: 'this.payload.amount > 1' }, /unknown operator \$where/],
      [{ 'payload.a': { $regex: '(' } }, /regular expression|Invalid/i],
      [{ 'payload.a': { $bogus: 1 } }, /unknown operator \$bogus/],
    ] as const) {
      const res = await fetch(`${box.url}/v1/destinations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: box.rcv.url('x'), rateLimit: { limit: 1, period: 'second' }, filter }),
      });
      assert.equal(res.status, 400);
      const { error } = (await res.json()) as {
        error: { code: string; details: { path: string; message: string }[] };
      };
      assert.equal(error.code, 'validation_failed');
      assert.equal(error.details[0]?.path, 'filter');
      assert.match(error.details[0]?.message ?? '', words);
    }
    const list = await box.client(tenant.apiKey).destinations.list();
    assert.equal(list.data.length, 0, 'nothing created');
  });
});

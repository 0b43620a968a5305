/**
 * Idempotency keys, per tenant: the same key again returns the first answer and creates
 * nothing — also when 20 posts with one key race each other, also through a batch, also
 * with another payload; the same key in another tenant is another event.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Sluice } from '@sluice/client';
import { collect, fileBox } from './helpers/client.ts';

const get = fileBox();

/** Events stored with this key, per tenant, read from the store. */
function eventsWithKey(key: string): Promise<{ tenant_id: string; id: string }[]> {
  return get().query('SELECT tenant_id, id FROM events WHERE idempotency_key = ? ORDER BY id', [key]);
}

async function tenantWithDestinations(
  name: string,
): Promise<{ api: Sluice; tenantId: string; dsts: string[] }> {
  const { tenant, api } = await get().tenant(name);
  const dsts: string[] = [];
  for (const n of [1, 2]) {
    const d = await api.destinations.create({
      url: get().rcv.url(`${name}-${n}`),
      rateLimit: { limit: 100, period: 'second' },
    });
    dsts.push(d.id);
  }
  return { api, tenantId: tenant.id, dsts };
}

describe('idempotency', () => {
  it('20 concurrent posts with one key: one event, 20 identical answers', { timeout: 30_000 }, async () => {
    const { api, tenantId, dsts } = await tenantWithDestinations('race');
    const event = { type: 'order.paid', payload: { order: 1 }, idempotencyKey: 'race-1' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.events.send(event)));
    for (const answer of answers.slice(1)) assert.deepEqual(answer, answers[0]);
    const first = answers[0]!;
    assert.equal(first.deliveries.length, 2, 'fanned out to both destinations, once');
    assert.deepEqual(
      (await eventsWithKey('race-1')).map((e) => [e.tenant_id, e.id]),
      [[tenantId, first.id]],
    );
    for (const dst of dsts) {
      const dlvs = await collect(api.deliveries.listAll({ destinationId: dst }));
      assert.deepEqual(
        dlvs.map((d) => d.eventId),
        [first.id],
        `one delivery to ${dst}`,
      );
    }
    const rcv = get().rcv;
    const paths = [rcv.path('race-1'), rcv.path('race-2')];
    await rcv.waitFor(() => paths.every((p) => rcv.deliveredIds(p).has(first.id)), 15_000, 'both deliveries');
    const seen = rcv.arrivals().filter((a) => a.headers['webhook-id'] === first.id);
    assert.deepEqual(seen.map((a) => a.path).sort(), paths.sort(), 'one request per destination');
  });

  it('the same key again, with another payload: the first answer, nothing created', async () => {
    const { api } = await tenantWithDestinations('again');
    const first = await api.events.send({ type: 'order.paid', payload: { v: 1 }, idempotencyKey: 'again-1' });
    const again = await api.events.send({
      type: 'order.refunded',
      payload: { v: 2 },
      idempotencyKey: 'again-1',
    });
    assert.deepEqual(again, first);
    const stored = await api.events.get(first.id);
    assert.deepEqual(stored.payload, { v: 1 }, 'the first payload stays');
    assert.equal(stored.type, 'order.paid');
    assert.equal((await eventsWithKey('again-1')).length, 1);
    const other = await api.events.send({ type: 'order.paid', payload: { v: 1 }, idempotencyKey: 'again-2' });
    assert.notEqual(other.id, first.id, 'another key is another event');
  });

  it('keys hold across single posts and batches, and within one batch', async () => {
    const { api } = await tenantWithDestinations('batch');
    const single = await api.events.send({ type: 't', payload: 1, idempotencyKey: 'b-1' });
    const batch = await api.events.sendBatch([
      { type: 't', payload: 2, idempotencyKey: 'b-1' },
      { type: 't', payload: 3, idempotencyKey: 'b-2' },
      { type: 't', payload: 4, idempotencyKey: 'b-2' },
      { type: 't', payload: 5 },
    ]);
    assert.deepEqual(batch.data[0], single, 'an earlier single post');
    assert.deepEqual(batch.data[2], batch.data[1], 'an earlier event of the same batch');
    assert.notEqual(batch.data[1]!.id, single.id);
    assert.equal(new Set(batch.data.map((e) => e.id)).size, 3);
    const again = await api.events.send({ type: 't', payload: 9, idempotencyKey: 'b-2' });
    assert.deepEqual(again, batch.data[1], 'a later single post');
    assert.equal((await eventsWithKey('b-1')).length, 1);
    assert.equal((await eventsWithKey('b-2')).length, 1);
  });

  it('concurrent batches sharing keys: one event per key', { timeout: 30_000 }, async () => {
    const { api } = await tenantWithDestinations('batches');
    const events = Array.from({ length: 10 }, (_, n) => ({
      type: 't',
      payload: n,
      idempotencyKey: `bb-${n}`,
    }));
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.events.sendBatch(events)));
    for (const answer of answers.slice(1)) assert.deepEqual(answer, answers[0]);
    for (let n = 0; n < 10; n++) assert.equal((await eventsWithKey(`bb-${n}`)).length, 1, `bb-${n}`);
  });

  it('the same key in another tenant is independent', { timeout: 30_000 }, async () => {
    const one = await tenantWithDestinations('one');
    const two = await tenantWithDestinations('two');
    const event = { type: 'order.paid', payload: { x: 1 }, idempotencyKey: 'shared-key' };
    const [a, b] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => one.api.events.send(event))),
      Promise.all(Array.from({ length: 10 }, () => two.api.events.send(event))),
    ]);
    assert.ok(a.every((x) => x.id === a[0]!.id) && b.every((x) => x.id === b[0]!.id));
    assert.notEqual(a[0]!.id, b[0]!.id);
    assert.deepEqual(a[0]!.deliveries.map((d) => d.destinationId).sort(), [...one.dsts].sort());
    assert.deepEqual(b[0]!.deliveries.map((d) => d.destinationId).sort(), [...two.dsts].sort());
    assert.deepEqual(
      (await eventsWithKey('shared-key')).map((e) => e.tenant_id).sort(),
      [one.tenantId, two.tenantId].sort(),
    );
    assert.equal((await two.api.events.get(b[0]!.id)).idempotencyKey, 'shared-key');
  });
});

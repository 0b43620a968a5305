/**
 * `/v1/events` through `app.inject`: accepted with 202 and a delivery per destination (named,
 * or every one whose event types match), the idempotency key's replay, the payload limit,
 * batches all or nothing, reading an event back; and each destination woken once per commit
 * (or, where the dispatcher wakes ahead, begun before the commit and told its outcome).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AcceptedEvent, AcceptedEventBatch, Delivery, Destination, Event, Page } from '@sluice/client';
import { StoreUnavailableError } from '@sluice/store';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

describe('/v1/events', () => {
  let api: TestApi;
  let key: string;
  let tenantId: string;
  let orders: string;
  let invoices: string;

  before(async () => {
    api = await testApi();
    ({ key, id: tenantId } = await api.tenant());
    const make = async (eventTypes: string[]) => {
      const res = await api.inject('POST', '/v1/destinations', {
        token: key,
        body: { ...DESTINATION, eventTypes },
      });
      return res.json<Destination>().id;
    };
    orders = await make(['order.*']);
    invoices = await make(['invoice.paid', 'order.refunded']);
  });
  after(() => api.close());

  const send = (body: unknown, token = key) => api.inject('POST', '/v1/events', { token, body });
  const targets = (accepted: AcceptedEvent) => accepted.deliveries.map((d) => d.destinationId).sort();

  it('202: fan-out to every destination whose event types match, each woken', async () => {
    api.dispatcher.woken.length = 0;
    const res = await send({ type: 'order.refunded', payload: { order: 'ord_1' } });
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json<AcceptedEvent>();
    assert.match(accepted.id, /^evt_[0-9a-z]{26}$/);
    assert.deepEqual(targets(accepted), [orders, invoices].sort());
    for (const d of accepted.deliveries) assert.match(d.id, /^dlv_[0-9a-z]{26}$/);
    assert.deepEqual(api.dispatcher.woken.sort(), [orders, invoices].sort());
    const none = await send({ type: 'customer.created', payload: null });
    assert.equal(none.statusCode, 202);
    assert.deepEqual(none.json<AcceptedEvent>().deliveries, [], 'accepted, for no destination');
  });

  it('202: to the destinations named, whatever their event types', async () => {
    const one = await send({ type: 'ping.sent', payload: 1, destinationId: invoices });
    assert.deepEqual(targets(one.json<AcceptedEvent>()), [invoices]);
    const both = await send({ type: 'ping.sent', payload: [1], destinationIds: [orders, invoices, orders] });
    assert.deepEqual(targets(both.json<AcceptedEvent>()), [orders, invoices].sort(), 'each once');
  });

  it('the same idempotency key answers the first event and creates nothing', async () => {
    const event = { type: 'order.paid', payload: { n: 1 }, idempotencyKey: 'order-1-paid' };
    const first = (await send(event)).json<AcceptedEvent>();
    const again = await send({ ...event, payload: { n: 2 } });
    assert.equal(again.statusCode, 202);
    assert.deepEqual(again.json<AcceptedEvent>(), first);
    const list = await api.inject('GET', `/v1/deliveries?eventId=${first.id}`, { token: key });
    assert.equal(list.json<Page<Delivery>>().data.length, 1);
    const read = await api.inject('GET', `/v1/events/${first.id}`, { token: key });
    assert.deepEqual(read.json<Event>().payload, { n: 1 }, 'the first payload is kept');
  });

  it('get: the event, its payload as sent, its deliveries', async () => {
    const payload = { order: 'ord_9', lines: [{ sku: 'a', qty: 2 }], paid: true, note: null };
    const sent = (await send({ type: 'order.paid', payload, destinationId: orders })).json<AcceptedEvent>();
    const res = await api.inject('GET', `/v1/events/${sent.id}`, { token: key });
    assert.equal(res.statusCode, 200, res.body);
    const event = res.json<Event>();
    assert.equal(event.type, 'order.paid');
    assert.deepEqual(event.payload, payload);
    assert.equal(event.idempotencyKey, null);
    assert.deepEqual(
      event.deliveries.map((d) => [d.id, d.destinationId, d.status, d.attemptCount]),
      [[sent.deliveries[0]?.id, orders, 'pending', 0]],
    );
    const other = await api.tenant();
    assertError(await api.inject('GET', `/v1/events/${sent.id}`, { token: other.key }), 404, 'not_found');
  });

  it('400s: a wildcard type, both destinationId and destinationIds, a missing payload', async () => {
    assertError(await send({ type: 'order.*', payload: {} }), 400, 'validation_failed', 'type');
    assertError(
      await send({ type: 'a.b', payload: {}, destinationId: orders, destinationIds: [orders] }),
      400,
      'validation_failed',
      'destinationIds',
    );
    assertError(await send({ type: 'a.b' }), 400, 'validation_failed', 'payload');
    assertError(
      await send({ type: 'a.b', payload: {}, destinationId: 'x' }),
      400,
      'validation_failed',
      'destinationId',
    );
  });

  it("404: an unknown destination, or another tenant's", async () => {
    const missing = `dst_${'0'.repeat(26)}`;
    const error = assertError(
      await send({ type: 'a.b', payload: {}, destinationId: missing }),
      404,
      'not_found',
    );
    assert.deepEqual(error.details, { id: missing });
    const other = await api.tenant();
    assertError(await send({ type: 'a.b', payload: {}, destinationId: orders }, other.key), 404, 'not_found');
  });

  it('413: a payload over the limit, saying the limit', async () => {
    const error = assertError(
      await send({ type: 'a.b', payload: 'x'.repeat(1_100) }),
      413,
      'payload_too_large',
    );
    assert.deepEqual(error.details, { maxPayloadBytes: 1_024 });
  });

  it('the admin token sends for the tenant it names', async () => {
    assertError(
      await send({ type: 'order.paid', payload: {} }, ADMIN_TOKEN),
      400,
      'validation_failed',
      'query.tenantId',
    );
    const res = await api.inject('POST', `/v1/events?tenantId=${tenantId}`, {
      token: ADMIN_TOKEN,
      body: { type: 'order.paid', payload: {} },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(targets(res.json<AcceptedEvent>()), [orders]);
  });

  it('batch: one result per event, in order; each destination woken once', async () => {
    api.dispatcher.woken.length = 0;
    const events = [
      { type: 'order.paid', payload: 1 },
      { type: 'invoice.paid', payload: 2 },
      { type: 'order.paid', payload: 3, idempotencyKey: 'batch-3' },
    ];
    const res = await api.inject('POST', '/v1/events/batch', { token: key, body: { events } });
    assert.equal(res.statusCode, 202, res.body);
    const { data } = res.json<AcceptedEventBatch>();
    assert.deepEqual(data.map(targets), [[orders], [invoices], [orders]]);
    assert.deepEqual(api.dispatcher.woken.sort(), [orders, invoices].sort());
  });

  it('batch: all or nothing; a bad event is named by its index', async () => {
    const before = await api.inject('GET', '/v1/deliveries?limit=500', { token: key });
    const count = before.json<Page<Delivery>>().data.length;
    const invalid = await api.inject('POST', '/v1/events/batch', {
      token: key,
      body: {
        events: [
          { type: 'order.paid', payload: 1 },
          { type: '', payload: 2 },
        ],
      },
    });
    assertError(invalid, 400, 'validation_failed', 'events.1.type');
    const missing = `dst_${'0'.repeat(26)}`;
    const unknown = await api.inject('POST', '/v1/events/batch', {
      token: key,
      body: {
        events: [
          { type: 'order.paid', payload: 1 },
          { type: 'order.paid', payload: 2, destinationId: missing },
        ],
      },
    });
    const error = assertError(unknown, 404, 'not_found');
    assert.match(error.message, /^events\.1: /);
    assert.deepEqual(error.details, { index: 1, cause: { id: missing } });
    assertError(
      await api.inject('POST', '/v1/events/batch', { token: key, body: { events: [] } }),
      400,
      'validation_failed',
      'events',
    );
    const after = await api.inject('GET', '/v1/deliveries?limit=500', { token: key });
    assert.equal(after.json<Page<Delivery>>().data.length, count, 'nothing of a refused batch was kept');
  });

  it('where the dispatcher wakes ahead: begun before the commit, told what it gave work, or that it failed', async () => {
    const order: string[] = [];
    const aheads: { ids: string[]; woken?: string[] | null }[] = [];
    api.dispatcher.wakeAhead = (ids) => {
      const call: (typeof aheads)[number] = { ids: [...ids].sort() };
      aheads.push(call);
      order.push('ahead');
      return (woken) => {
        call.woken = woken && [...woken].sort();
      };
    };
    const accept = api.store.acceptEvents.bind(api.store);
    api.store.acceptEvents = (...args) => {
      order.push('commit');
      return accept(...args);
    };
    try {
      api.dispatcher.woken.length = 0;
      const res = await send({ type: 'order.created', payload: {}, destinationIds: [orders, invoices] });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(order, ['ahead', 'commit']);
      assert.deepEqual(aheads, [{ ids: [orders, invoices].sort(), woken: [orders, invoices].sort() }]);
      assert.deepEqual(api.dispatcher.woken, [], 'woken through the answer, not again');

      api.store.acceptEvents = async () => {
        throw new StoreUnavailableError('postgres is down');
      };
      const down = await send({ type: 'order.created', payload: {}, destinationIds: [orders] });
      assert.equal(down.statusCode, 503, down.body);
      assert.deepEqual(aheads[1], { ids: [orders], woken: null }, 'a failed commit: every claim goes back');
    } finally {
      delete api.dispatcher.wakeAhead;
      api.store.acceptEvents = accept;
    }
  });
});

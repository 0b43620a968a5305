/**
 * Ingest against the event-type catalog through `app.inject`: a payload that fails its type's
 * schema is `400 validation_failed` naming each path from the body's root, a batch all or
 * nothing; `sluice.…` types are refused; unknown types pass unless strict mode; a change of a
 * type is in force at once here, and within the catalog's TTL from another process.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, assertError, DESTINATION, testApi } from '../test-app.ts';

const SCHEMA = {
  type: 'object',
  required: ['amount'],
  properties: { amount: { type: 'integer', minimum: 0 }, email: { type: 'string', format: 'email' } },
};

interface Issue {
  path: string;
  message: string;
  index?: number;
}

async function withCatalog(strict: boolean) {
  let now = Date.now();
  const api = await testApi({ eventTypesStrict: strict }, { clock: () => now });
  const { id: tenantId, key } = await api.tenant();
  const res = await api.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
  assert.equal(res.statusCode, 201, res.body);
  const created = await api.inject('POST', '/v1/event-types', {
    token: ADMIN_TOKEN,
    body: { name: 'order.paid', description: 'An order was paid.', schema: SCHEMA },
  });
  assert.equal(created.statusCode, 201, created.body);
  await api.inject('POST', '/v1/event-types', {
    token: ADMIN_TOKEN,
    body: { name: 'order.noted', description: 'No schema: any payload.' },
  });
  const events = async () => (await api.store.pendingEvents(tenantId, 1_000)) as number;
  return { api, key, tenantId, events, advance: (ms: number) => (now += ms) };
}

describe('ingest against the event-type catalog', () => {
  let c: Awaited<ReturnType<typeof withCatalog>>;
  before(async () => {
    c = await withCatalog(false);
  });
  after(() => c.api.close());

  const send = (body: unknown) => c.api.inject('POST', '/v1/events', { token: c.key, body });
  const batch = (events: unknown[]) =>
    c.api.inject('POST', '/v1/events/batch', { token: c.key, body: { events } });

  it('a payload that satisfies the schema is accepted; one that fails it is 400 with each path', async () => {
    assert.equal(
      (await send({ type: 'order.paid', payload: { amount: 3, email: 'a@example.com' } })).statusCode,
      202,
    );
    const before = await c.events();
    const error = assertError(
      await send({ type: 'order.paid', payload: { amount: -1, email: 'nope' } }),
      400,
      'validation_failed',
      '/payload/amount',
    );
    const paths = (error.details as Issue[]).map((i) => i.path).sort();
    assert.deepEqual(paths, ['/payload/amount', '/payload/email']);
    assertError(await send({ type: 'order.paid', payload: {} }), 400, 'validation_failed', '/payload/amount');
    assertError(await send({ type: 'order.paid', payload: [1] }), 400, 'validation_failed', '/payload');
    assert.equal(await c.events(), before, 'nothing accepted');
    // No schema, and not in the catalog: any payload.
    assert.equal((await send({ type: 'order.noted', payload: [1, 'x'] })).statusCode, 202);
    assert.equal((await send({ type: 'not.listed', payload: 'anything' })).statusCode, 202);
  });

  it('a batch is all or nothing: the failing event’s paths carry its index', async () => {
    const before = await c.events();
    const res = await batch([
      { type: 'order.paid', payload: { amount: 1 } },
      { type: 'order.noted', payload: {} },
      { type: 'order.paid', payload: { amount: 'x' } },
    ]);
    const error = assertError(res, 400, 'validation_failed', '/events/2/payload/amount');
    assert.deepEqual(
      (error.details as Issue[]).map((i) => i.index),
      [2],
    );
    assert.match(error.message, /^events\.2\.payload/);
    assert.equal(await c.events(), before, 'nothing of the batch accepted');
    const ok = await batch([
      { type: 'order.paid', payload: { amount: 1 } },
      { type: 'order.noted', payload: {} },
    ]);
    assert.equal(ok.statusCode, 202, ok.body);
    assert.equal(await c.events(), before + 2);
  });

  it('sluice.* types are refused at ingest, built-in or not, alone or in a batch', async () => {
    for (const type of ['sluice.test', 'sluice.delivery.dead', 'sluice.anything']) {
      assertError(await send({ type, payload: {} }), 400, 'validation_failed', 'type');
      assertError(
        await c.api.inject('POST', `/v1/events?tenantId=${c.tenantId}`, {
          token: ADMIN_TOKEN,
          body: { type, payload: {} },
        }),
        400,
        'validation_failed',
        'type',
      );
    }
    assertError(
      await batch([
        { type: 'order.noted', payload: {} },
        { type: 'sluice.test', payload: {} },
      ]),
      400,
      'validation_failed',
      'events.1.type',
    );
  });

  it('a change through this API is in force at once; another process’s within the TTL', async () => {
    await c.api.inject('PATCH', '/v1/event-types/order.noted', {
      token: ADMIN_TOKEN,
      body: { schema: { type: 'object', required: ['id'] } },
    });
    assertError(await send({ type: 'order.noted', payload: {} }), 400, 'validation_failed', '/payload/id');
    // Another API process changes the row (here: the store itself, past this API's catalog).
    await c.api.store.updateEventType('order.noted', { description: 'd', schema: null }, Date.now() + 1);
    assertError(await send({ type: 'order.noted', payload: {} }), 400, 'validation_failed', '/payload/id');
    c.advance(1_000);
    assert.equal((await send({ type: 'order.noted', payload: {} })).statusCode, 202);
    await c.api.store.deleteEventType('order.noted');
    c.advance(1_000);
    assert.equal((await send({ type: 'order.noted', payload: {} })).statusCode, 202, 'unknown: accepted');
    await c.api.inject('DELETE', '/v1/event-types/order.paid', { token: ADMIN_TOKEN });
    assert.equal((await send({ type: 'order.paid', payload: {} })).statusCode, 202, 'deleted here: at once');
  });
});

describe('SLUICE_EVENT_TYPES_STRICT', () => {
  it('an unknown type is 400 unknown_event_type, alone or in a batch (nothing accepted); known ones pass', async () => {
    const c = await withCatalog(true);
    try {
      const send = (body: unknown) => c.api.inject('POST', '/v1/events', { token: c.key, body });
      const error = assertError(await send({ type: 'not.listed', payload: {} }), 400, 'unknown_event_type');
      assert.deepEqual(error.details, { type: 'not.listed' });
      const res = await c.api.inject('POST', '/v1/events/batch', {
        token: c.key,
        body: {
          events: [
            { type: 'order.noted', payload: {} },
            { type: 'not.listed', payload: {} },
          ],
        },
      });
      const batchError = assertError(res, 400, 'unknown_event_type');
      assert.deepEqual(batchError.details, { type: 'not.listed', index: 1 });
      assert.equal(await c.events(), 0);
      assert.equal((await send({ type: 'order.noted', payload: {} })).statusCode, 202);
      assert.equal((await send({ type: 'order.paid', payload: { amount: 1 } })).statusCode, 202);
      await c.api.inject('POST', '/v1/event-types', {
        token: ADMIN_TOKEN,
        body: { name: 'not.listed', description: 'now listed' },
      });
      assert.equal(
        (await send({ type: 'not.listed', payload: {} })).statusCode,
        202,
        'created here: at once',
      );
    } finally {
      await c.api.close();
    }
  });
});

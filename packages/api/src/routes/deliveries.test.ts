/**
 * `/v1/deliveries` and a destination's replay through `app.inject`: the list and its
 * filters, a delivery with its attempts, retrying (a dead one; a delivered one conflicts) and
 * replaying dead deliveries. Outcomes are written through the store as a delivery worker
 * writes them (`settle`).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  AcceptedEvent,
  Delivery,
  DeliveryWithAttempts,
  Destination,
  Page,
  ReplayResult,
} from '@sluice/client';
import { assertError, DESTINATION, settle, type TestApi, testApi } from '../test-app.ts';

describe('/v1/deliveries', () => {
  let api: TestApi;
  let key: string;
  let good: string;
  let bad: string;
  const delivered: string[] = [];
  const dead: string[] = [];

  const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    api.inject(method, url, { token: key, body });
  const list = async (query: string): Promise<string[]> => {
    const res = await call('GET', `/v1/deliveries?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Page<Delivery>>().data.map((d) => d.id);
  };

  before(async () => {
    api = await testApi();
    ({ key } = await api.tenant());
    const make = async () => (await call('POST', '/v1/destinations', DESTINATION)).json<Destination>().id;
    good = await make();
    bad = await make();
    for (const [destinationId, ids] of [
      [good, delivered],
      [bad, dead],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const sent = await call('POST', '/v1/events', { type: 'order.paid', payload: { i }, destinationId });
        ids.push(sent.json<AcceptedEvent>().deliveries[0]!.id);
      }
    }
    assert.equal(await settle(api.store, good, 200), 2);
    assert.equal(await settle(api.store, bad, 500), 2);
  });
  after(() => api.close());

  it('list: newest first, filtered by destination, status, event and last change', async () => {
    assert.deepEqual(await list(''), [...delivered, ...dead].reverse());
    assert.deepEqual(await list(`destinationId=${good}`), [...delivered].reverse());
    assert.deepEqual(await list('status=dead'), [...dead].reverse());
    assert.deepEqual(await list(`status=delivered&destinationId=${bad}`), []);
    const one = await api.store.getDelivery(dead[0]!);
    assert.deepEqual(await list(`eventId=${one?.delivery.eventId}`), [dead[0]]);
    assert.deepEqual(await list(`since=${new Date(Date.now() + 60_000).toISOString()}`), []);
    assert.equal((await list(`since=${new Date(Date.now() - 60_000).toISOString()}`)).length, 4);
  });

  it('list: bad filters are 400s at their query paths', async () => {
    const get = (query: string) => call('GET', `/v1/deliveries?${query}`);
    assertError(await get('status=lost'), 400, 'validation_failed', 'query.status');
    assertError(await get('since=yesterday'), 400, 'validation_failed', 'query.since');
    assertError(await get('destinationId=evt_x'), 400, 'validation_failed', 'query.destinationId');
    assertError(await get('cursor=%25%25'), 400, 'validation_failed', 'query.cursor');
  });

  it('get: the delivery and each attempt', async () => {
    const res = await call('GET', `/v1/deliveries/${dead[0]}`);
    assert.equal(res.statusCode, 200, res.body);
    const delivery = res.json<DeliveryWithAttempts>();
    assert.equal(delivery.status, 'dead');
    assert.equal(delivery.destinationId, bad);
    assert.equal(delivery.attemptCount, 1);
    assert.equal(delivery.sequence, 1);
    assert.match(delivery.lastError ?? '', /500/);
    assert.equal(delivery.attempts.length, 1);
    const [attempt] = delivery.attempts;
    assert.equal(attempt?.attempt, 1);
    assert.equal(attempt?.statusCode, 500);
    assert.equal(attempt?.latencyMs, 3);
    const ok = (await call('GET', `/v1/deliveries/${delivered[1]}`)).json<DeliveryWithAttempts>();
    assert.equal(ok.status, 'delivered');
    assert.equal(ok.attempts[0]?.statusCode, 200);
    assertError(await call('GET', `/v1/deliveries/dlv_${'0'.repeat(26)}`), 404, 'not_found');
    const other = await api.tenant();
    assertError(await api.inject('GET', `/v1/deliveries/${dead[0]}`, { token: other.key }), 404, 'not_found');
  });

  it('retry: a dead delivery is pending again, due now, its destination woken', async () => {
    api.dispatcher.woken.length = 0;
    const res = await call('POST', `/v1/deliveries/${dead[0]}/retry`);
    assert.equal(res.statusCode, 202, res.body);
    const retried = res.json<Delivery>();
    assert.equal(retried.status, 'pending');
    assert.ok(Date.parse(retried.nextAttemptAt ?? '') <= Date.now());
    assert.deepEqual(api.dispatcher.woken, [bad]);
  });

  it('retry: a delivered one is a 409 conflict, naming its status', async () => {
    const error = assertError(await call('POST', `/v1/deliveries/${delivered[0]}/retry`), 409, 'conflict');
    assert.deepEqual(error.details, { status: 'delivered' });
    assertError(await call('POST', `/v1/deliveries/dlv_${'0'.repeat(26)}/retry`), 404, 'not_found');
  });

  it('replay: the dead deliveries of a destination back to pending; since narrows it', async () => {
    const later = new Date(Date.now() + 60_000).toISOString();
    const none = await call('POST', `/v1/destinations/${bad}/replay`, { status: 'dead', since: later });
    assert.equal(none.statusCode, 202, none.body);
    assert.deepEqual(none.json<ReplayResult>(), { count: 0 });
    api.dispatcher.woken.length = 0;
    const res = await call('POST', `/v1/destinations/${bad}/replay`, { status: 'dead' });
    assert.deepEqual(res.json<ReplayResult>(), { count: 1 }, 'the one dead delivery not retried above');
    assert.deepEqual(api.dispatcher.woken, [bad]);
    assert.deepEqual(await list('status=dead'), []);
    assertError(
      await call('POST', `/v1/destinations/${bad}/replay`, { status: 'delivered' }),
      400,
      'validation_failed',
      'status',
    );
    assertError(await call('POST', `/v1/destinations/${bad}/replay`, {}), 400, 'validation_failed', 'status');
  });
});

/**
 * Tenant quotas through `app.inject`: the operator sets them with `PATCH /v1/tenants/:id`; a
 * request past one is refused whole with `429 rate_limited` and `Retry-After`, nothing of it
 * accepted; the operator-wide default applies where a tenant has no setting; the refusals
 * are counted on /metrics. The clock is the test's, so the bucket's refill is exact.
 */

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Destination, Tenant } from '@sluice/client';
import { ADMIN_TOKEN, assertError, DESTINATION, settle, type TestApi, testApi } from '../test-app.ts';

const admin = { token: ADMIN_TOKEN };
const events = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ type: 'order.created', payload: { i } }));

describe('tenant quotas', () => {
  let api: TestApi;
  let now = 1_700_000_000_000;
  let tenant: { id: string; key: string };

  before(async () => {
    api = await testApi(
      {},
      { clock: () => now, quotas: { defaults: { eventsPerSecond: null, pendingEvents: 40 } } },
    );
  });
  after(() => api.close());

  beforeEach(async () => {
    now += 60_000;
    tenant = await api.tenant();
    const res = await api.inject('POST', '/v1/destinations', { token: tenant.key, body: DESTINATION });
    assert.equal(res.statusCode, 201, res.body);
    res.json<Destination>();
  });

  const post = (n: number, key = tenant.key) =>
    api.inject('POST', '/v1/events/batch', { token: key, body: { events: events(n) } });
  const countEvents = async (tenantId: string) =>
    Number(
      (
        api.store.db.prepare('SELECT count(*) AS n FROM events WHERE tenant_id = ?').get(tenantId) as {
          n: number;
        }
      ).n,
    );

  it('PATCH sets the quotas (admin only), GET shows them, null falls back to the default', async () => {
    const res = await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
      ...admin,
      body: { quota: { eventsPerSecond: 100 } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<Tenant>().quota, { eventsPerSecond: 100, pendingEvents: null });
    const read = await api.inject('GET', `/v1/tenants/${tenant.id}`, admin);
    assert.deepEqual(read.json<Tenant>().quota, { eventsPerSecond: 100, pendingEvents: null });
    assertError(
      await api.inject('PATCH', `/v1/tenants/${tenant.id}`, { token: tenant.key, body: { quota: {} } }),
      403,
      'forbidden',
    );
    assertError(
      await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
        ...admin,
        body: { quota: { eventsPerSecond: 0 } },
      }),
      400,
      'validation_failed',
      'quota.eventsPerSecond',
    );
    assertError(
      await api.inject('PATCH', `/v1/tenants/ten_${'0'.repeat(26)}`, { ...admin, body: { name: 'x' } }),
      404,
      'not_found',
    );
  });

  it('the rate: a batch past it is 429 with Retry-After, nothing of it accepted; after Retry-After it fits', async () => {
    await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
      ...admin,
      body: { quota: { eventsPerSecond: 10 } },
    });
    assert.equal((await post(6)).statusCode, 202);
    const refused = await post(6);
    const error = assertError(refused, 429, 'rate_limited');
    assert.deepEqual(error.details, {
      quota: 'eventsPerSecond',
      limit: 10,
      requested: 6,
      retryAfterSeconds: 1,
    });
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(await countEvents(tenant.id), 6, 'the refused batch left nothing');
    now += 1_000 * Number(refused.headers['retry-after']);
    assert.equal((await post(6)).statusCode, 202);
    assert.equal(await countEvents(tenant.id), 12);
  });

  it('the rate: one event at a time, and a batch larger than the quota is never accepted', async () => {
    await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
      ...admin,
      body: { quota: { eventsPerSecond: 2 } },
    });
    const one = () => api.inject('POST', '/v1/events', { token: tenant.key, body: events(1)[0] });
    assert.equal((await one()).statusCode, 202);
    assert.equal((await one()).statusCode, 202);
    assertError(await one(), 429, 'rate_limited');
    now += 500;
    assert.equal((await one()).statusCode, 202);
    now += 10_000;
    const tooBig = assertError(await post(3), 429, 'rate_limited');
    assert.equal((tooBig.details as { requested: number }).requested, 3);
    assert.equal(await countEvents(tenant.id), 3);
  });

  it('pending: the operator-wide default applies to a tenant without its own; its own setting wins', async () => {
    assert.equal((await post(30)).statusCode, 202);
    const refused = await post(11);
    const error = assertError(refused, 429, 'rate_limited');
    assert.deepEqual(error.details, {
      quota: 'pendingEvents',
      limit: 40,
      pending: 30,
      requested: 11,
      retryAfterSeconds: 5,
    });
    assert.equal(refused.headers['retry-after'], '5');
    assert.equal((await post(10)).statusCode, 202, 'exactly up to the quota');
    assert.equal(await countEvents(tenant.id), 40);
    await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
      ...admin,
      body: { quota: { pendingEvents: 50 } },
    });
    assert.equal((await post(10)).statusCode, 202);
    assertError(await post(1), 429, 'rate_limited');
    // An event with no destination finishes at once: it is not pending.
    const none = await api.inject('POST', '/v1/events/batch', {
      token: (await api.tenant()).key,
      body: { events: events(50) },
    });
    assert.equal(none.statusCode, 202);
  });

  it('pending: delivered events free their room', async () => {
    await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
      ...admin,
      body: { quota: { pendingEvents: 5 } },
    });
    assert.equal((await post(5)).statusCode, 202);
    assertError(await post(1), 429, 'rate_limited');
    const [destination] = await api.store.listDestinations(tenant.id);
    await settle(api.store, destination?.id ?? '', 200);
    now += 200; // past the recount interval: a refusal counts again first
    assert.equal((await post(5)).statusCode, 202);
  });

  it('other tenants are unaffected, and /metrics counts the refusals by quota', async () => {
    await api.inject('PATCH', `/v1/tenants/${tenant.id}`, {
      ...admin,
      body: { quota: { eventsPerSecond: 1 } },
    });
    const other = await api.tenant();
    await api.inject('POST', '/v1/destinations', { token: other.key, body: DESTINATION });
    assert.equal((await post(1)).statusCode, 202);
    assertError(await post(1), 429, 'rate_limited');
    assert.equal((await post(20, other.key)).statusCode, 202);
    const metrics = (await api.inject('GET', '/metrics')).body;
    assert.match(metrics, /sluice_ingest_refused_total\{quota="eventsPerSecond"\} [1-9]/);
    assert.match(metrics, /sluice_ingest_refused_total\{quota="pendingEvents"\} \d/);
  });
});

describe('no quota configured', () => {
  it('accepts everything: no 429', async () => {
    const api = await testApi({ maxRequestBytes: 1024 * 1024 });
    try {
      const { key } = await api.tenant();
      await api.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
      for (let i = 0; i < 5; i++) {
        const res = await api.inject('POST', '/v1/events/batch', {
          token: key,
          body: { events: events(1_000) },
        });
        assert.equal(res.statusCode, 202, res.body.slice(0, 200));
      }
    } finally {
      await api.close();
    }
  });
});

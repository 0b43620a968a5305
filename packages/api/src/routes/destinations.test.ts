/**
 * `/v1/destinations` and its actions through `app.inject`: create (defaults filled, the
 * secret once), get, patch, list, delete, pause and resume, rotate and read the secret, health; and
 * what each tells the delivery side (created, changed).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  Destination,
  DestinationSecrets,
  DestinationWithSecret,
  HealthWithTransitions,
  Page,
  RotatedSecret,
} from '@sluice/client';
import { assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

describe('/v1/destinations', () => {
  let api: TestApi;
  let key: string;
  let tenantId: string;

  before(async () => {
    api = await testApi();
    ({ key, id: tenantId } = await api.tenant());
  });
  after(() => api.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    api.inject(method, url, { token: key, body });
  const create = async (body: unknown = DESTINATION): Promise<DestinationWithSecret> => {
    const res = await call('POST', '/v1/destinations', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<DestinationWithSecret>();
  };

  it('create: 201, the defaults filled in, the secret in this answer only; the delivery side is told', async () => {
    const d = await create();
    assert.match(d.id, /^dst_[0-9a-z]{26}$/);
    assert.equal(d.tenantId, tenantId);
    assert.match(d.secret, /^whsec_/);
    const { id, secret, createdAt, updatedAt, ...rest } = d;
    assert.deepEqual(rest, {
      tenantId,
      name: null,
      url: DESTINATION.url,
      rateLimit: DESTINATION.rateLimit,
      maxConcurrency: null,
      adaptive: false,
      ordering: 'none',
      eventTypes: ['*'],
      retry: rest.retry,
      timeoutMs: 15_000,
      headers: {},
      auth: null,
      tls: null,
      filter: null,
      transform: null,
      state: 'active',
      disabledReason: null,
      health: {
        state: 'healthy',
        since: null,
        consecutiveFailures: 0,
        nextProbeAt: null,
        lastErrorClass: null,
        suspendReason: null,
        failureRate: null,
        certificateExpiresAt: null,
      },
    });
    assert.ok(rest.retry.maxAttempts >= 1);
    assert.equal(createdAt, updatedAt);
    assert.ok(api.dispatcher.created.includes(id));
    const got = await call('GET', `/v1/destinations/${id}`);
    assert.equal(got.statusCode, 200);
    assert.equal('secret' in got.json<Destination>(), false, 'not in a read: only in GET .../secret');
    const list = await call('GET', '/v1/destinations?limit=500');
    assert.ok(!list.body.includes(d.secret), 'nor in the list');
    assert.deepEqual(got.json<Destination>(), { ...rest, id, createdAt, updatedAt });
  });

  it('create: every field given is kept, a given secret too', async () => {
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const body = {
      name: 'billing',
      url: 'https://hooks.example.com/billing',
      rateLimit: { limit: 600, period: 'minute', burst: 900 },
      maxConcurrency: 4,
      adaptive: true,
      ordering: 'fifo',
      eventTypes: ['invoice.*', 'customer.deleted'],
      retry: { maxAttempts: 3, initialDelayMs: 1_000, maxDelayMs: 60_000 },
      timeoutMs: 5_000,
      secret,
    };
    const d = await create(body);
    const { secret: _, ...fields } = body;
    for (const [field, value] of Object.entries(fields))
      assert.deepEqual(d[field as keyof Destination], value, field);
    assert.equal(d.secret, secret);
  });

  it('create: bad fields are 400s at their paths', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ url: undefined }, 'url'],
      [{ url: 'https://user:pw@example.com/' }, 'url'],
      [{ rateLimit: undefined }, 'rateLimit'],
      [{ rateLimit: { limit: 1, period: 'week' } }, 'rateLimit.period'],
      [{ maxConcurrency: 0 }, 'maxConcurrency'],
      [{ ordering: 'lifo' }, 'ordering'],
      [{ eventTypes: [] }, 'eventTypes'],
      [{ eventTypes: ['order.**'] }, 'eventTypes.0'],
      [{ retry: { maxAttempts: 51, initialDelayMs: 0, maxDelayMs: 0 } }, 'retry.maxAttempts'],
      [{ timeoutMs: 99 }, 'timeoutMs'],
      [{ secret: 'hunter2' }, 'secret'],
    ];
    for (const [change, path] of bad) {
      const res = await call('POST', '/v1/destinations', { ...DESTINATION, ...change });
      assertError(res, 400, 'validation_failed', path);
    }
  });

  it('patch: changes only the fields given; the delivery side is told', async () => {
    const d = await create({ ...DESTINATION, name: 'orders' });
    const res = await call('PATCH', `/v1/destinations/${d.id}`, {
      rateLimit: { limit: 2, period: 'second' },
      eventTypes: ['order.*'],
    });
    assert.equal(res.statusCode, 200, res.body);
    const patched = res.json<Destination>();
    assert.deepEqual(patched.rateLimit, { limit: 2, period: 'second' });
    assert.deepEqual(patched.eventTypes, ['order.*']);
    assert.equal(patched.name, 'orders');
    assert.equal(patched.url, d.url);
    assert.ok(Date.parse(patched.updatedAt) >= Date.parse(d.updatedAt));
    assert.equal(api.dispatcher.changed.at(-1), d.id);
    const cleared = await call('PATCH', `/v1/destinations/${d.id}`, { name: null, maxConcurrency: null });
    assert.equal(cleared.json<Destination>().name, null);
  });

  it('patch: an empty patch, an unknown field or a bad value is a 400; an unknown id a 404', async () => {
    const d = await create();
    assertError(await call('PATCH', `/v1/destinations/${d.id}`, {}), 400, 'validation_failed');
    assertError(
      await call('PATCH', `/v1/destinations/${d.id}`, { state: 'paused' }),
      400,
      'validation_failed',
      'state',
    );
    assertError(
      await call('PATCH', `/v1/destinations/${d.id}`, { timeoutMs: 0 }),
      400,
      'validation_failed',
      'timeoutMs',
    );
    const missing = `dst_${'0'.repeat(26)}`;
    assertError(await call('PATCH', `/v1/destinations/${missing}`, { name: 'x' }), 404, 'not_found');
    assertError(await call('GET', `/v1/destinations/${missing}`), 404, 'not_found');
  });

  it('list: the tenant’s destinations newest first, paged', async () => {
    const fresh = await testApi();
    try {
      const tenant = await fresh.tenant();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await fresh.inject('POST', '/v1/destinations', { token: tenant.key, body: DESTINATION });
        ids.push(res.json<Destination>().id);
      }
      const first = await fresh.inject('GET', '/v1/destinations?limit=2', { token: tenant.key });
      const page = first.json<Page<Destination>>();
      assert.deepEqual(
        page.data.map((d) => d.id),
        [ids[2], ids[1]],
      );
      assert.ok(page.nextCursor);
      const second = await fresh.inject('GET', `/v1/destinations?limit=2&cursor=${page.nextCursor}`, {
        token: tenant.key,
      });
      assert.deepEqual(second.json<Page<Destination>>(), {
        data: [second.json<Page<Destination>>().data[0]],
        nextCursor: null,
      });
      assert.equal(second.json<Page<Destination>>().data[0]?.id, ids[0]);
    } finally {
      await fresh.close();
    }
  });

  it('pause and resume: the state, and the delivery side told each time', async () => {
    const d = await create();
    const paused = await call('POST', `/v1/destinations/${d.id}/pause`);
    assert.equal(paused.statusCode, 200, paused.body);
    assert.equal(paused.json<Destination>().state, 'paused');
    assert.equal(api.dispatcher.changed.at(-1), d.id);
    const resumed = await call('POST', `/v1/destinations/${d.id}/resume`);
    assert.equal(resumed.json<Destination>().state, 'active');
    assert.equal(resumed.json<Destination>().health.state, 'healthy');
    assertError(
      await call('POST', `/v1/destinations/${d.id}/pause?now=1`),
      400,
      'validation_failed',
      'query.now',
    );
  });

  it('rotate-secret: a new secret, the old one expiring in 24 h', async () => {
    const d = await create();
    const res = await call('POST', `/v1/destinations/${d.id}/rotate-secret`);
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json<RotatedSecret>();
    assert.match(rotated.secret, /^whsec_/);
    assert.notEqual(rotated.secret, d.secret);
    const expires = Date.parse(rotated.previousSecretExpiresAt ?? '');
    assert.ok(Math.abs(expires - (Date.now() + 24 * 3_600_000)) < 60_000);
    assert.equal(api.dispatcher.changed.at(-1), d.id);

    const got = await call('GET', `/v1/destinations/${d.id}/secret`);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(got.json<DestinationSecrets>(), {
      secret: rotated.secret,
      previous: [{ secret: d.secret, expiresAt: rotated.previousSecretExpiresAt }],
    });
    const patched = await call('PATCH', `/v1/destinations/${d.id}`, { name: 'renamed' });
    assert.ok(!patched.body.includes(rotated.secret), 'a patch answers without it');
  });

  it('secret: the current one and none previous before a rotation; another tenant: 404', async () => {
    const d = await create();
    const got = await call('GET', `/v1/destinations/${d.id}/secret`);
    assert.deepEqual(got.json<DestinationSecrets>(), { secret: d.secret, previous: [] });
    const other = await api.tenant();
    assertError(
      await api.inject('GET', `/v1/destinations/${d.id}/secret`, { token: other.key }),
      404,
      'not_found',
    );
  });

  it('health: the breaker state and its transitions; limit is checked', async () => {
    const d = await create();
    const res = await call('GET', `/v1/destinations/${d.id}/health?limit=5`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<HealthWithTransitions>(), { ...d.health, transitions: [] });
    assertError(
      await call('GET', `/v1/destinations/${d.id}/health?limit=0`),
      400,
      'validation_failed',
      'query.limit',
    );
  });

  it('delete: 204, then gone (404) and out of the list', async () => {
    const d = await create();
    const res = await call('DELETE', `/v1/destinations/${d.id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(api.dispatcher.changed.at(-1), d.id);
    assertError(await call('GET', `/v1/destinations/${d.id}`), 404, 'not_found');
    assertError(await call('DELETE', `/v1/destinations/${d.id}`), 404, 'not_found');
    const list = await call('GET', '/v1/destinations?limit=500');
    assert.ok(!list.json<Page<Destination>>().data.some((x) => x.id === d.id));
  });
});

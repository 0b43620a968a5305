/** `/v1/tenants` through `app.inject`: create (the key once, and working), get, list and its pages. */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page, Tenant, TenantWithKey } from '@sluice/client';
import { ADMIN_TOKEN, assertError, type TestApi, testApi } from '../test-app.ts';

describe('/v1/tenants', () => {
  let api: TestApi;
  before(async () => {
    api = await testApi();
  });
  after(() => api.close());

  const admin = { token: ADMIN_TOKEN };

  it('create: 201 with the API key, which is then a working tenant key', async () => {
    const res = await api.inject('POST', '/v1/tenants', { ...admin, body: { name: 'acme' } });
    assert.equal(res.statusCode, 201, res.body);
    const tenant = res.json<TenantWithKey>();
    assert.match(tenant.id, /^ten_[0-9a-z]{26}$/);
    assert.equal(tenant.name, 'acme');
    assert.match(tenant.apiKey, /^sk_/);
    assert.ok(Math.abs(Date.parse(tenant.createdAt) - Date.now()) < 60_000);
    const own = await api.inject('GET', '/v1/destinations', { token: tenant.apiKey });
    assert.equal(own.statusCode, 200);
  });

  it('get: the tenant without its key; an unknown id 404, a malformed one 400', async () => {
    const { id } = await api.tenant('globex');
    const res = await api.inject('GET', `/v1/tenants/${id}`, admin);
    assert.equal(res.statusCode, 200);
    const tenant = res.json<Tenant>();
    assert.deepEqual(Object.keys(tenant).sort(), ['createdAt', 'id', 'name', 'quota']);
    assert.deepEqual(tenant.quota, { eventsPerSecond: null, pendingEvents: null });
    assert.equal(tenant.name, 'globex');
    const missing = `ten_${'0'.repeat(26)}`;
    const error = assertError(await api.inject('GET', `/v1/tenants/${missing}`, admin), 404, 'not_found');
    assert.deepEqual(error.details, { id: missing });
    assertError(await api.inject('GET', '/v1/tenants/dst_x', admin), 400, 'validation_failed', 'params.id');
  });

  it('create: a name is required, non-empty, at most 200 characters, and nothing else', async () => {
    const create = (body: unknown) => api.inject('POST', '/v1/tenants', { ...admin, body });
    assertError(await create({}), 400, 'validation_failed', 'name');
    assertError(await create({ name: '' }), 400, 'validation_failed', 'name');
    assertError(await create({ name: 'x'.repeat(201) }), 400, 'validation_failed', 'name');
    assertError(await create({ name: 'a\u0000b' }), 400, 'validation_failed', 'name');
    assertError(await create({ name: 'acme', plan: 'pro' }), 400, 'validation_failed', 'plan');
    const query = await api.inject('POST', '/v1/tenants?tenantId=x', { ...admin, body: { name: 'a' } });
    assertError(query, 400, 'validation_failed', 'query.tenantId');
  });

  it('list: newest first, in pages that follow nextCursor to null', async () => {
    const fresh = await testApi();
    try {
      const names = ['t1', 't2', 't3', 't4', 't5'];
      for (const name of names) await fresh.tenant(name);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '' : `&cursor=${cursor}`;
        const res = await fresh.inject('GET', `/v1/tenants?limit=2${query}`, admin);
        assert.equal(res.statusCode, 200, res.body);
        const page = res.json<Page<Tenant>>();
        assert.ok(page.data.length <= 2);
        seen.push(...page.data.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(seen, [...names].reverse());
      assertError(
        await fresh.inject('GET', '/v1/tenants?tenantId=x', admin),
        400,
        'validation_failed',
        'query.tenantId',
      );
    } finally {
      await fresh.close();
    }
  });
});

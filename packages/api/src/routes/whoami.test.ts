/** `GET /v1/whoami` through `app.inject`: each kind of token, and none. */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Whoami } from '@sluice/client';
import { ADMIN_TOKEN, assertError, type TestApi, testApi } from '../test-app.ts';

describe('GET /v1/whoami', () => {
  let api: TestApi;
  before(async () => {
    api = await testApi();
  });
  after(() => api.close());

  it('the admin token: role admin, no tenant', async () => {
    const res = await api.inject('GET', '/v1/whoami', { token: ADMIN_TOKEN });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<Whoami>(), { role: 'admin', tenant: null, portal: null });
  });

  it("a tenant's key: role tenant, its id and name", async () => {
    const tenant = await api.tenant('acme');
    const res = await api.inject('GET', '/v1/whoami', { token: tenant.key });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<Whoami>(), {
      role: 'tenant',
      tenant: { id: tenant.id, name: 'acme' },
      portal: null,
    });
  });

  it('no token or a wrong one → 401; a query parameter → 400', async () => {
    assertError(await api.inject('GET', '/v1/whoami'), 401, 'unauthorized');
    assertError(await api.inject('GET', '/v1/whoami', { token: 'sk_nope' }), 401, 'unauthorized');
    assertError(await api.inject('GET', '/v1/whoami?x=1', { token: ADMIN_TOKEN }), 400, 'validation_failed');
  });
});

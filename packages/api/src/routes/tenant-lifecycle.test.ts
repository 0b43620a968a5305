/**
 * Tenants' lifecycle through `app.inject`: renaming, several API keys (created, listed,
 * deleted and refused at once), a tenant's deletion, and the bad input of each route.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedKey, Destination, Tenant, TenantKey } from '@sluice/client';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

const admin = { token: ADMIN_TOKEN };
const MISSING_TENANT = `ten_${'0'.repeat(26)}`;
const MISSING_KEY = `key_${'0'.repeat(26)}`;

describe("tenants' lifecycle", () => {
  let api: TestApi;
  before(async () => {
    api = await testApi();
  });
  after(() => api.close());

  const keys = async (tenantId: string) => {
    const res = await api.inject('GET', `/v1/tenants/${tenantId}/keys`, admin);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ data: TenantKey[] }>().data;
  };

  it('PATCH renames the tenant: 200 with it', async () => {
    const { id } = await api.tenant('acme');
    const res = await api.inject('PATCH', `/v1/tenants/${id}`, { ...admin, body: { name: 'Acme Inc' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<Tenant>().name, 'Acme Inc');
    assertError(
      await api.inject('PATCH', `/v1/tenants/${id}`, { ...admin, body: { name: '' } }),
      400,
      'validation_failed',
      'name',
    );
    assertError(
      await api.inject('PATCH', `/v1/tenants/${MISSING_TENANT}`, { ...admin, body: { name: 'x' } }),
      404,
      'not_found',
    );
  });

  it('keys: the first is listed; another is created (shown once), works, and is listed by prefix', async () => {
    const tenant = await api.tenant();
    const [first] = await keys(tenant.id);
    assert.ok(first);
    assert.match(first.id, /^key_[0-9a-z]{26}$/);
    assert.equal(first.prefix, tenant.key.slice(0, 11));
    assert.deepEqual(Object.keys(first).sort(), ['createdAt', 'id', 'lastUsedAt', 'prefix']);

    const res = await api.inject('POST', `/v1/tenants/${tenant.id}/keys`, admin);
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<CreatedKey>();
    assert.deepEqual(Object.keys(created).sort(), ['apiKey', 'id']);
    assert.match(created.apiKey, /^sk_/);
    assert.notEqual(created.apiKey, tenant.key);
    const withBody = await api.inject('POST', `/v1/tenants/${tenant.id}/keys`, { ...admin, body: {} });
    assert.equal(withBody.statusCode, 201, withBody.body);

    assert.equal((await api.inject('GET', '/v1/destinations', { token: created.apiKey })).statusCode, 200);
    const listed = await keys(tenant.id);
    assert.deepEqual(
      listed.map((k) => k.id),
      [first.id, created.id, withBody.json<CreatedKey>().id],
    );
    const shown = listed.find((k) => k.id === created.id);
    assert.equal(shown?.prefix, created.apiKey.slice(0, 11));
    assert.ok(!JSON.stringify(listed).includes(created.apiKey), 'never the key');
  });

  it('lastUsedAt: set by a request, then not rewritten within the minute', async () => {
    const tenant = await api.tenant();
    const [before] = await keys(tenant.id);
    assert.equal(before?.lastUsedAt, null);
    await api.inject('GET', '/v1/destinations', { token: tenant.key });
    await new Promise((resolve) => setImmediate(resolve));
    const [used] = await keys(tenant.id);
    assert.ok(used?.lastUsedAt !== null && used?.lastUsedAt !== undefined);
    await api.inject('GET', '/v1/destinations', { token: tenant.key });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await keys(tenant.id))[0]?.lastUsedAt, used.lastUsedAt);
  });

  it('a deleted key is refused at once (401); the last key cannot be deleted (409)', async () => {
    const tenant = await api.tenant();
    const created = (await api.inject('POST', `/v1/tenants/${tenant.id}/keys`, admin)).json<CreatedKey>();
    const [first] = await keys(tenant.id);
    // The old key is used (and so would have been cached before tenant keys), then deleted.
    assert.equal((await api.inject('GET', '/v1/destinations', { token: tenant.key })).statusCode, 200);
    const res = await api.inject('DELETE', `/v1/tenants/${tenant.id}/keys/${first?.id}`, admin);
    assert.equal(res.statusCode, 204, res.body);
    assertError(await api.inject('GET', '/v1/destinations', { token: tenant.key }), 401, 'unauthorized');
    assert.equal((await api.inject('GET', '/v1/destinations', { token: created.apiKey })).statusCode, 200);

    const last = await api.inject('DELETE', `/v1/tenants/${tenant.id}/keys/${created.id}`, admin);
    assertError(last, 409, 'conflict');
    assert.equal(
      (await api.inject('GET', '/v1/destinations', { token: created.apiKey })).statusCode,
      200,
      'kept',
    );
    assertError(
      await api.inject('DELETE', `/v1/tenants/${tenant.id}/keys/${first?.id}`, admin),
      404,
      'not_found',
    );
  });

  it('DELETE a tenant: 204, its keys refused, its destinations gone with their deliveries cancelled', async () => {
    const tenant = await api.tenant();
    const other = await api.tenant();
    const extra = (await api.inject('POST', `/v1/tenants/${tenant.id}/keys`, admin)).json<CreatedKey>();
    const created = await api.inject('POST', '/v1/destinations', { token: tenant.key, body: DESTINATION });
    const destination = created.json<Destination>();
    const accepted = await api.inject('POST', '/v1/events', {
      token: tenant.key,
      body: { type: 'order.created', payload: {}, destinationId: destination.id },
    });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const eventId = accepted.json<{ id: string }>().id;

    const res = await api.inject('DELETE', `/v1/tenants/${tenant.id}`, admin);
    assert.equal(res.statusCode, 204, res.body);
    assertError(await api.inject('GET', '/v1/destinations', { token: tenant.key }), 401, 'unauthorized');
    assertError(await api.inject('GET', '/v1/destinations', { token: extra.apiKey }), 401, 'unauthorized');
    assert.equal(await api.store.getDestination(destination.id), undefined);
    assert.ok(api.dispatcher.changed.includes(destination.id), 'the delivery side is told');
    const event = await api.store.getEvent(eventId);
    assert.deepEqual(
      event?.deliveries.map((d) => d.status),
      ['cancelled'],
    );
    assertError(await api.inject('GET', `/v1/tenants/${tenant.id}`, admin), 404, 'not_found');
    assertError(await api.inject('GET', `/v1/tenants/${tenant.id}/keys`, admin), 404, 'not_found');
    assertError(await api.inject('DELETE', `/v1/tenants/${tenant.id}`, admin), 404, 'not_found');
    assertError(await api.inject('GET', `/v1/destinations/${destination.id}`, admin), 404, 'not_found');
    assert.equal(
      (await api.inject('GET', '/v1/destinations', { token: other.key })).statusCode,
      200,
      'others work',
    );
  });

  it('bad input: wrong token 401, a tenant key 403, unknown ids 404, malformed ids and bodies 400 — changing nothing', async () => {
    const tenant = await api.tenant();
    const [first] = await keys(tenant.id);
    const routes: [method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string][] = [
      ['POST', `/v1/tenants/${tenant.id}/keys`],
      ['GET', `/v1/tenants/${tenant.id}/keys`],
      ['DELETE', `/v1/tenants/${tenant.id}/keys/${first?.id}`],
      ['DELETE', `/v1/tenants/${tenant.id}`],
    ];
    for (const [method, url] of routes) {
      assertError(await api.inject(method, url), 401, 'unauthorized');
      assertError(await api.inject(method, url, { token: 'sk_wrong' }), 401, 'unauthorized');
      assertError(await api.inject(method, url, { token: tenant.key }), 403, 'forbidden');
    }
    assertError(await api.inject('POST', `/v1/tenants/${MISSING_TENANT}/keys`, admin), 404, 'not_found');
    assertError(await api.inject('GET', `/v1/tenants/${MISSING_TENANT}/keys`, admin), 404, 'not_found');
    assertError(
      await api.inject('DELETE', `/v1/tenants/${MISSING_TENANT}/keys/${first?.id}`, admin),
      404,
      'not_found',
    );
    assertError(
      await api.inject('DELETE', `/v1/tenants/${tenant.id}/keys/${MISSING_KEY}`, admin),
      404,
      'not_found',
    );
    assertError(await api.inject('DELETE', `/v1/tenants/${MISSING_TENANT}`, admin), 404, 'not_found');
    assertError(
      await api.inject('DELETE', `/v1/tenants/${tenant.id}/keys/dst_x`, admin),
      400,
      'validation_failed',
      'params.keyId',
    );
    assertError(await api.inject('DELETE', '/v1/tenants/x', admin), 400, 'validation_failed', 'params.id');
    assertError(
      await api.inject('POST', `/v1/tenants/${tenant.id}/keys`, { ...admin, body: { name: 'x' } }),
      400,
      'validation_failed',
      'name',
    );
    assertError(
      await api.inject('POST', `/v1/tenants/${tenant.id}/keys?x=1`, admin),
      400,
      'validation_failed',
      'query.x',
    );

    // Nothing changed: one key, the tenant there, its key working.
    assert.deepEqual(
      (await keys(tenant.id)).map((k) => k.id),
      [first?.id],
    );
    assert.equal((await api.inject('GET', '/v1/destinations', { token: tenant.key })).statusCode, 200);
  });
});

/**
 * Tenants' lifecycle in the shape under test (docs/api.md "A tenant's keys and its
 * deletion"): a key deleted is refused at its next request, a deleted tenant's keys too, with
 * its destinations gone and their undelivered deliveries cancelled — and, in the distributed
 * shape, the same across two API replicas: a key warm in one replica is refused there as soon
 * as the other deletes it (no cache keeps it alive).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { twoApiReplicas } from './helpers/replicas.ts';
import { SHAPE } from './helpers/shape.ts';
import {
  type Client,
  createDestination,
  createTenant,
  getDelivery,
  harness,
  postEvent,
} from './helpers/sluice.ts';

const status = async (c: Client, path: string, token: string) =>
  (await c.api('GET', path, undefined, token)).status;

describe("tenants' lifecycle", () => {
  it('a deleted key is refused at once; a deleted tenant’s keys too, its destinations gone, deliveries cancelled', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const admin = box.adminToken;
    const tenant = await createTenant(box, admin);
    const destination = await createDestination(box, tenant.apiKey, {
      url: rcv.url('doomed'),
      rateLimit: { limit: 5, period: 'second' },
    });
    await box.api('POST', `/v1/destinations/${destination.id}/pause`, undefined, tenant.apiKey);
    const accepted = await postEvent(box, tenant.apiKey, {
      type: 'order.created',
      payload: {},
      destinationId: destination.id,
    });
    const deliveryId = accepted.deliveries[0]?.id ?? '';

    const created = await box.api<{ id: string; apiKey: string }>(
      'POST',
      `/v1/tenants/${tenant.id}/keys`,
      undefined,
      admin,
    );
    assert.equal(created.status, 201);
    const second = created.body.apiKey;
    const keys = await box.api<{ data: { id: string }[] }>(
      'GET',
      `/v1/tenants/${tenant.id}/keys`,
      undefined,
      admin,
    );
    const first = keys.body.data[0]?.id ?? '';
    assert.equal(await status(box, '/v1/destinations', tenant.apiKey), 200, 'the first key, used');
    assert.equal(
      (await box.api('DELETE', `/v1/tenants/${tenant.id}/keys/${first}`, undefined, admin)).status,
      204,
    );
    assert.equal(await status(box, '/v1/destinations', tenant.apiKey), 401, 'refused at its next request');
    assert.equal(await status(box, '/v1/destinations', second), 200);

    const log = await box.api<{ data: { id: string }[] }>(
      'GET',
      '/v1/events?type=order.*',
      undefined,
      second,
    );
    assert.deepEqual(
      log.body.data.map((e) => e.id),
      [accepted.id],
      'the event log',
    );

    assert.equal((await box.api('DELETE', `/v1/tenants/${tenant.id}`, undefined, admin)).status, 204);
    assert.equal(await status(box, '/v1/destinations', second), 401, "a deleted tenant's key");
    assert.equal(await status(box, `/v1/destinations/${destination.id}`, admin), 404, 'its destination');
    assert.equal((await getDelivery(box, admin, deliveryId)).status, 'cancelled');
  });

  it('two API replicas: a key warm in one is refused there once the other deletes it', {
    timeout: 90_000,
    skip: SHAPE !== 'distributed' && 'several API replicas run in the distributed shape only',
  }, async (t) => {
    const { a, b, adminToken } = await twoApiReplicas(t);

    const tenant = await createTenant(a, adminToken);
    const created = await a.api<{ id: string; apiKey: string }>(
      'POST',
      `/v1/tenants/${tenant.id}/keys`,
      undefined,
      adminToken,
    );
    const other = created.body.apiKey;
    for (let n = 0; n < 5; n++)
      assert.equal(await status(b, '/v1/destinations', tenant.apiKey), 200, 'warm in b');
    const keys = await a.api<{ data: { id: string }[] }>(
      'GET',
      `/v1/tenants/${tenant.id}/keys`,
      undefined,
      adminToken,
    );
    const first = keys.body.data[0]?.id ?? '';
    assert.equal(
      (await a.api('DELETE', `/v1/tenants/${tenant.id}/keys/${first}`, undefined, adminToken)).status,
      204,
    );
    assert.equal(await status(b, '/v1/destinations', tenant.apiKey), 401, 'refused in b at once');
    assert.equal(await status(b, '/v1/destinations', other), 200);
    assert.equal((await a.api('DELETE', `/v1/tenants/${tenant.id}`, undefined, adminToken)).status, 204);
    assert.equal(await status(b, '/v1/destinations', other), 401, "the deleted tenant's key, in b at once");
  });

  it("Sluice's own tenant (the backlog alerts') is never renamed, deleted, given a key or a portal link: 409", {
    timeout: 30_000,
  }, async (t) => {
    const { box } = await harness(t, {
      SLUICE_ALERT_URL: 'http://127.0.0.1:9/alerts',
      SLUICE_ALERT_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    });
    const id = 'ten_00000000000000000000000000';
    const calls: [string, string, unknown][] = [
      ['PATCH', `/v1/tenants/${id}`, { name: 'mine now' }],
      ['DELETE', `/v1/tenants/${id}`, undefined],
      ['POST', `/v1/tenants/${id}/keys`, {}],
      ['POST', '/v1/portal-links', { tenantId: id }],
    ];
    for (const [method, path, body] of calls) {
      const res = await box.api<{ error: { code: string; details: unknown } }>(
        method,
        path,
        body,
        box.adminToken,
      );
      assert.equal(res.status, 409, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'conflict');
      assert.deepEqual(res.body.error.details, { system: true });
    }
    const tenant = await box.api<{ name: string }>('GET', `/v1/tenants/${id}`, undefined, box.adminToken);
    assert.equal(tenant.status, 200, 'still there');
    assert.equal(tenant.body.name, 'sluice (system)');
  });
});

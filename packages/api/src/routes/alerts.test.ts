/**
 * `GET /v1/alerts` through `app.inject` (ADR 0009): the alerts firing now, by destination
 * then kind, each as the store raised it with its time in ISO-8601; a resolved alert is gone
 * from the list; `?tenantId=` narrows the admin's view, and names no other tenant for a
 * tenant's key (404, as an id that does not exist). The alerts are written through the
 * store, as the alerter writes them. (Authentication: auth.test.ts.)
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Alert, Destination } from '@sluice/client';
import type { FiringAlert } from '@sluice/core';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

describe('GET /v1/alerts', () => {
  let api: TestApi;
  let acme: { id: string; key: string };
  let globex: { id: string; key: string };
  let first: string;
  let second: string;
  let theirs: string;
  const raisedAt = Date.UTC(2026, 10, 26, 12, 0, 0);

  const list = async (token: string, query = '') => {
    const res = await api.inject('GET', `/v1/alerts${query}`, { token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ data: Alert[] }>().data;
  };
  const alert = (destinationId: string, tenantId: string, kind: FiringAlert['kind']): FiringAlert => ({
    destinationId,
    tenantId,
    kind,
    threshold: kind === 'pending_count' ? 100 : 60,
    value: kind === 'pending_count' ? 250 : 95,
    raisedAt,
  });

  before(async () => {
    api = await testApi();
    acme = await api.tenant('acme');
    globex = await api.tenant('globex');
    const make = async (token: string) =>
      (await api.inject('POST', '/v1/destinations', { token, body: DESTINATION })).json<Destination>().id;
    // The list sorts by destination id: name the two by that order.
    const made = [await make(acme.key), await make(acme.key)].sort();
    first = made[0] as string;
    second = made[1] as string;
    theirs = await make(globex.key);
    // Raised out of order: the list sorts them.
    for (const a of [
      alert(second, acme.id, 'pending_count'),
      alert(first, acme.id, 'pending_count'),
      alert(first, acme.id, 'pending_age'),
      alert(theirs, globex.id, 'pending_age'),
    ]) {
      assert.equal(await api.store.raiseAlert(a, null, raisedAt), true);
    }
  });
  after(() => api.close());

  it("a tenant's key: its firing alerts, by destination then kind, as raised", async () => {
    assert.deepEqual(await list(acme.key), [
      { ...alert(first, acme.id, 'pending_age'), raisedAt: new Date(raisedAt).toISOString() },
      { ...alert(first, acme.id, 'pending_count'), raisedAt: new Date(raisedAt).toISOString() },
      { ...alert(second, acme.id, 'pending_count'), raisedAt: new Date(raisedAt).toISOString() },
    ]);
    assert.deepEqual(
      (await list(globex.key)).map((a) => [a.destinationId, a.kind]),
      [[theirs, 'pending_age']],
    );
  });

  it("the admin token: every tenant's, or one tenant's with ?tenantId=", async () => {
    assert.equal((await list(ADMIN_TOKEN)).length, 4);
    assert.deepEqual(
      (await list(ADMIN_TOKEN, `?tenantId=${globex.id}`)).map((a) => a.destinationId),
      [theirs],
    );
    assert.deepEqual(
      (await list(acme.key, `?tenantId=${acme.id}`)).map((a) => a.destinationId),
      [first, first, second],
    );
  });

  it('?tenantId= of another tenant (with a key) or of none (admin): 404; a malformed one: 400', async () => {
    assertError(
      await api.inject('GET', `/v1/alerts?tenantId=${globex.id}`, { token: acme.key }),
      404,
      'not_found',
    );
    const missing = `ten_${'0'.repeat(26)}`;
    assertError(
      await api.inject('GET', `/v1/alerts?tenantId=${missing}`, { token: ADMIN_TOKEN }),
      404,
      'not_found',
    );
    assertError(
      await api.inject('GET', '/v1/alerts?tenantId=nope', { token: ADMIN_TOKEN }),
      400,
      'validation_failed',
      'query.tenantId',
    );
  });

  it('a resolved alert is no longer listed; the others stay', async () => {
    assert.equal(
      await api.store.resolveAlert(alert(first, acme.id, 'pending_age'), null, raisedAt + 1_000),
      true,
    );
    assert.deepEqual(
      (await list(acme.key)).map((a) => [a.destinationId, a.kind]),
      [
        [first, 'pending_count'],
        [second, 'pending_count'],
      ],
    );
    assert.equal((await list(ADMIN_TOKEN)).length, 3);
  });
});

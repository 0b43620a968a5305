/**
 * Who may call what, through `app.inject`: no token or an unknown one is a 401 on every
 * route that needs one (before the body is read); a tenant's key on a tenants route is a
 * 403; a tenant's key sees its own resources only (another's answer 404, never 403); the
 * admin token acts on any, and names the tenant when it creates.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Destination, Page } from '@sluice/client';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from './test-app.ts';

describe('authentication and scope', () => {
  let api: TestApi;
  let acme: { id: string; key: string };
  let globex: { id: string; key: string };
  let acmeDestination: string;

  before(async () => {
    api = await testApi();
    acme = await api.tenant('acme');
    globex = await api.tenant('globex');
    const res = await api.inject('POST', '/v1/destinations', { token: acme.key, body: DESTINATION });
    assert.equal(res.statusCode, 201, res.body);
    acmeDestination = res.json<Destination>().id;
  });
  after(() => api.close());

  const guarded: [string, string][] = [
    ['POST', '/v1/tenants'],
    ['GET', '/v1/tenants'],
    ['GET', '/v1/destinations'],
    ['POST', '/v1/destinations'],
    ['GET', '/v1/destinations/stats'],
    ['POST', '/v1/events'],
    ['POST', '/v1/events/batch'],
    ['GET', '/v1/deliveries'],
    ['GET', '/v1/alerts'],
  ];

  it('no token: 401 unauthorized on every guarded route, whatever the body', async () => {
    for (const [method, url] of guarded) {
      const res = await api.inject(method as 'GET', url, {
        body: method === 'GET' ? undefined : '{not json',
      });
      assertError(res, 401, 'unauthorized');
    }
  });

  it('an unknown token, or a malformed header: 401', async () => {
    for (const authorization of ['Bearer sk_nope', 'Basic dXNlcjpwYXNz', 'Bearer', 'sk_nope']) {
      const res = await api.inject('GET', '/v1/destinations', { headers: { authorization } });
      const error = assertError(res, 401, 'unauthorized');
      assert.equal(error.details, null);
    }
  });

  it("a tenant's key on the tenants routes: 403 forbidden", async () => {
    assertError(await api.inject('GET', '/v1/tenants', { token: acme.key }), 403, 'forbidden');
    assertError(
      await api.inject('POST', '/v1/tenants', { token: acme.key, body: { name: 'x' } }),
      403,
      'forbidden',
    );
    assertError(await api.inject('GET', `/v1/tenants/${acme.id}`, { token: acme.key }), 403, 'forbidden');
  });

  it("another tenant's destination answers 404, never 403", async () => {
    const url = `/v1/destinations/${acmeDestination}`;
    const error = assertError(await api.inject('GET', url, { token: globex.key }), 404, 'not_found');
    assert.deepEqual(error.details, { id: acmeDestination });
    assertError(await api.inject('PATCH', url, { token: globex.key, body: { name: 'x' } }), 404, 'not_found');
    assertError(await api.inject('DELETE', url, { token: globex.key }), 404, 'not_found');
    assertError(await api.inject('POST', `${url}/pause`, { token: globex.key }), 404, 'not_found');
    const list = await api.inject('GET', '/v1/destinations', { token: globex.key });
    assert.deepEqual(list.json<Page<Destination>>().data, []);
  });

  it("a tenant's key naming another tenant: 404 for that tenant", async () => {
    const res = await api.inject('GET', `/v1/destinations?tenantId=${acme.id}`, { token: globex.key });
    assert.deepEqual(assertError(res, 404, 'not_found').details, { id: acme.id });
  });

  it('the admin token sees every tenant, or one with ?tenantId=', async () => {
    const all = await api.inject('GET', '/v1/destinations', { token: ADMIN_TOKEN });
    assert.deepEqual(
      all.json<Page<Destination>>().data.map((d) => d.id),
      [acmeDestination],
    );
    const globexOnly = await api.inject('GET', `/v1/destinations?tenantId=${globex.id}`, {
      token: ADMIN_TOKEN,
    });
    assert.deepEqual(globexOnly.json<Page<Destination>>().data, []);
    const one = await api.inject('GET', `/v1/destinations/${acmeDestination}`, { token: ADMIN_TOKEN });
    assert.equal(one.statusCode, 200);
    const narrowed = await api.inject('GET', `/v1/destinations/${acmeDestination}?tenantId=${globex.id}`, {
      token: ADMIN_TOKEN,
    });
    assertError(narrowed, 404, 'not_found');
  });

  it('the admin token must name the tenant to create: 400 at query.tenantId', async () => {
    const res = await api.inject('POST', '/v1/destinations', { token: ADMIN_TOKEN, body: DESTINATION });
    assertError(res, 400, 'validation_failed', 'query.tenantId');
    const unknown = await api.inject('POST', `/v1/destinations?tenantId=ten_${'0'.repeat(26)}`, {
      token: ADMIN_TOKEN,
      body: DESTINATION,
    });
    assertError(unknown, 404, 'not_found');
    const created = await api.inject('POST', `/v1/destinations?tenantId=${globex.id}`, {
      token: ADMIN_TOKEN,
      body: DESTINATION,
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json<Destination>().tenantId, globex.id);
  });

  it('the public routes need no token', async () => {
    assert.equal((await api.inject('GET', '/healthz')).statusCode, 200);
    assert.deepEqual((await api.inject('GET', '/readyz')).json(), { status: 'ready' });
    const openapi = await api.inject('GET', '/openapi.json');
    assert.equal(openapi.statusCode, 200);
    assert.equal(openapi.json<{ openapi: string }>().openapi, '3.1.0');
    const metrics = await api.inject('GET', '/metrics');
    assert.equal(metrics.statusCode, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain/);
  });
});

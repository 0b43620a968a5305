/**
 * Portal links and the test event through `app.inject` (test/portal-tokens.test.ts runs the
 * same in both shapes, over HTTP): a link made, listed and revoked; what its token may do;
 * the test event's type and payload; the portal page's headers.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AcceptedEvent, CreatedPortalLink, Event, PortalLink, Whoami } from '@sluice/client';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

describe('portal links', () => {
  let api: TestApi;
  let now = Date.parse('2026-01-15T10:00:00Z');
  before(async () => {
    api = await testApi({ publicUrl: 'https://hooks.example.com' }, { clock: () => now });
  });
  after(() => api.close());

  const destination = async (key: string) => {
    const res = await api.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: string }>().id;
  };
  const link = async (key: string, body: Record<string, unknown> = {}) => {
    const res = await api.inject('POST', '/v1/portal-links', { token: key, body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<CreatedPortalLink>();
  };

  it('POST → 201: id, a url under SLUICE_PUBLIC_URL with the token in its fragment, expiresAt', async () => {
    const tenant = await api.tenant('acme');
    const created = await link(tenant.key, {
      access: 'read',
      branding: { title: 'Acme', accentColor: '#0a7cff' },
    });
    assert.match(created.id, /^prt_[0-9a-z]{26}$/);
    assert.match(created.token, new RegExp(`^${created.id}\\.[A-Za-z0-9_-]{43}$`));
    assert.equal(created.url, `https://hooks.example.com/portal/#token=${created.token}`);
    assert.equal(created.expiresAt, new Date(now + 900_000).toISOString(), 'default 900 s');
    const who = await api.inject('GET', '/v1/whoami', { token: created.token });
    assert.deepEqual(who.json<Whoami>(), {
      role: 'portal',
      tenant: { id: tenant.id, name: 'acme' },
      portal: {
        id: created.id,
        access: 'read',
        destinationIds: null,
        branding: { title: 'Acme', accentColor: '#0a7cff' },
        expiresAt: created.expiresAt,
      },
    });
    const stored = JSON.stringify(await api.store.getPortalLink(created.id));
    assert.ok(!stored.includes(created.token.split('.')[1] ?? '?'), 'the token is not stored');
  });

  it('GET lists the tenant’s links without tokens; the admin token all or one tenant’s; DELETE → 204, refused at once', async () => {
    const a = await api.tenant();
    const b = await api.tenant();
    const mine = await link(a.key);
    const theirs = await link(ADMIN_TOKEN, { tenantId: b.id, expiresInSeconds: 10 });
    const list = (await api.inject('GET', '/v1/portal-links', { token: a.key })).json<{
      data: PortalLink[];
    }>();
    assert.deepEqual(
      list.data.map((l) => l.id),
      [mine.id],
    );
    assert.ok(!JSON.stringify(list).includes(mine.token));
    assert.deepEqual(Object.keys(list.data[0] ?? {}).sort(), [
      'access',
      'branding',
      'createdAt',
      'destinationIds',
      'expired',
      'expiresAt',
      'id',
      'tenantId',
    ]);
    const forB = await api.inject('GET', `/v1/portal-links?tenantId=${b.id}`, { token: ADMIN_TOKEN });
    assert.deepEqual(
      forB.json<{ data: PortalLink[] }>().data.map((l) => l.id),
      [theirs.id],
    );
    assertError(
      await api.inject('DELETE', `/v1/portal-links/${theirs.id}`, { token: a.key }),
      404,
      'not_found',
    );
    assert.equal((await api.inject('GET', '/v1/whoami', { token: mine.token })).statusCode, 200);
    assert.equal(
      (await api.inject('DELETE', `/v1/portal-links/${mine.id}`, { token: a.key })).statusCode,
      204,
    );
    assertError(await api.inject('GET', '/v1/whoami', { token: mine.token }), 401, 'unauthorized');
    assertError(
      await api.inject('DELETE', `/v1/portal-links/${mine.id}`, { token: a.key }),
      404,
      'not_found',
    );
  });

  it('expired → 401 from expiresAt on, listed as expired', async () => {
    const tenant = await api.tenant();
    const created = await link(tenant.key, { expiresInSeconds: 10 });
    assert.equal((await api.inject('GET', '/v1/destinations', { token: created.token })).statusCode, 200);
    now += 10_000;
    const res = await api.inject('GET', '/v1/destinations', { token: created.token });
    assert.match(assertError(res, 401, 'unauthorized').message, /expired/);
    const list = (await api.inject('GET', '/v1/portal-links', { token: tenant.key })).json<{
      data: PortalLink[];
    }>();
    assert.equal(list.data[0]?.expired, true);
  });

  it('bad input → 400 naming the field; an unknown or another tenant’s destination → 404; admin without tenantId → 400', async () => {
    const tenant = await api.tenant();
    const other = await api.tenant();
    const theirs = await destination(other.key);
    const bad: [Record<string, unknown>, string][] = [
      [{ access: 'write' }, 'access'],
      [{ expiresInSeconds: 9 }, 'expiresInSeconds'],
      [{ expiresInSeconds: 86_401 }, 'expiresInSeconds'],
      [{ destinationIds: [] }, 'destinationIds'],
      [{ destinationIds: ['nope'] }, 'destinationIds.0'],
      [{ branding: { accentColor: 'red' } }, 'branding.accentColor'],
      [{ branding: { logoUrl: 'http://example.com/logo.png' } }, 'branding.logoUrl'],
      [{ branding: { logoUrl: 'javascript:alert(1)' } }, 'branding.logoUrl'],
      [{ branding: { title: '' } }, 'branding.title'],
      [{ branding: { font: 'x' } }, 'branding.font'],
      [{ bogus: 1 }, 'bogus'],
    ];
    for (const [body, path] of bad)
      assertError(
        await api.inject('POST', '/v1/portal-links', { token: tenant.key, body }),
        400,
        'validation_failed',
        path,
      );
    assertError(
      await api.inject('POST', '/v1/portal-links', { token: tenant.key, body: { destinationIds: [theirs] } }),
      404,
      'not_found',
    );
    assertError(
      await api.inject('POST', '/v1/portal-links', { token: ADMIN_TOKEN, body: {} }),
      400,
      'validation_failed',
      'tenantId',
    );
    for (const logoUrl of [
      'https://cdn.example.com/a.png',
      'data:image/svg+xml;base64,PHN2Zy8+',
      'http://127.0.0.1:9/l.png',
    ])
      await link(tenant.key, { branding: { logoUrl } });
  });

  it('a portal token: no admin, tenant or portal-link route, no events posted (403); read: no write (403)', async () => {
    const tenant = await api.tenant();
    const dst = await destination(tenant.key);
    const read = (await link(tenant.key, { access: 'read' })).token;
    const manage = (await link(tenant.key)).token;
    for (const token of [read, manage]) {
      for (const [method, url, body] of [
        ['GET', '/v1/tenants'],
        ['GET', `/v1/tenants/${tenant.id}`],
        ['POST', `/v1/tenants/${tenant.id}/keys`],
        ['POST', '/v1/portal-links', {}],
        ['GET', '/v1/portal-links'],
        ['POST', '/v1/events', { type: 'x', payload: {} }],
        ['POST', '/v1/event-types', { name: 'a.b', description: 'x' }],
      ] as const)
        assertError(await api.inject(method, url, { token, body }), 403, 'forbidden');
    }
    assertError(await api.inject('POST', `/v1/destinations/${dst}/pause`, { token: read }), 403, 'forbidden');
    assertError(await api.inject('POST', `/v1/destinations/${dst}/test`, { token: read }), 403, 'forbidden');
    assertError(await api.inject('GET', `/v1/destinations/${dst}/secret`, { token: read }), 403, 'forbidden');
    assert.equal(
      (await api.inject('POST', `/v1/destinations/${dst}/pause`, { token: manage })).statusCode,
      200,
    );
    assert.equal(
      (await api.inject('GET', `/v1/destinations/${dst}/secret`, { token: manage })).statusCode,
      200,
    );
    assert.equal((await api.inject('GET', '/v1/event-types', { token: read })).statusCode, 200);
  });

  it('narrowed: other destinations 404, lists filtered, no destination created (403)', async () => {
    const tenant = await api.tenant();
    const [a, b] = [await destination(tenant.key), await destination(tenant.key)];
    const token = (await link(tenant.key, { destinationIds: [a] })).token;
    assert.equal((await api.inject('GET', `/v1/destinations/${a}`, { token })).statusCode, 200);
    assertError(await api.inject('GET', `/v1/destinations/${b}`, { token }), 404, 'not_found');
    const list = (await api.inject('GET', '/v1/destinations', { token })).json<{ data: { id: string }[] }>();
    assert.deepEqual(
      list.data.map((d) => d.id),
      [a],
    );
    assertError(await api.inject('POST', '/v1/destinations', { token, body: DESTINATION }), 403, 'forbidden');
    const sent = (
      await api.inject('POST', '/v1/events', {
        token: tenant.key,
        body: { type: 'o.p', payload: {}, destinationIds: [a, b] },
      })
    ).json<AcceptedEvent>();
    const event = (await api.inject('GET', `/v1/events/${sent.id}`, { token })).json<Event>();
    assert.deepEqual(
      event.deliveries.map((d) => d.destinationId),
      [a],
    );
    const toB = sent.deliveries.find((d) => d.destinationId === b)?.id;
    assertError(await api.inject('GET', `/v1/deliveries/${toB}`, { token }), 404, 'not_found');
  });
});

describe('the test event', () => {
  let api: TestApi;
  before(async () => {
    api = await testApi({}, { clock: () => Date.parse('2026-01-15T10:00:00Z') });
  });
  after(() => api.close());

  it('sluice.test with its example, to that destination only, whatever its eventTypes', async () => {
    const tenant = await api.tenant();
    const res0 = await api.inject('POST', '/v1/destinations', {
      token: tenant.key,
      body: { ...DESTINATION, eventTypes: ['order.*'] },
    });
    const dst = res0.json<{ id: string }>().id;
    await api.inject('POST', '/v1/destinations', { token: tenant.key, body: DESTINATION });
    const res = await api.inject('POST', `/v1/destinations/${dst}/test`, { token: tenant.key });
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json<AcceptedEvent>();
    assert.deepEqual(
      accepted.deliveries.map((d) => d.destinationId),
      [dst],
    );
    assert.ok(api.dispatcher.woken.includes(dst), 'woken: the limiter paces it');
    const event = (await api.inject('GET', `/v1/events/${accepted.id}`, { token: tenant.key })).json<Event>();
    assert.equal(event.type, 'sluice.test');
    assert.deepEqual(event.payload, {
      type: 'sluice.test',
      tenantId: tenant.id,
      destinationId: dst,
      occurredAt: '2026-01-15T10:00:00.000Z',
      data: { test: true },
    });
  });

  it('a catalog type: its example, else {"test": true}; a given payload must satisfy its schema', async () => {
    const tenant = await api.tenant();
    const dst = (
      await api.inject('POST', '/v1/destinations', { token: tenant.key, body: DESTINATION })
    ).json<{
      id: string;
    }>().id;
    const schema = { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } };
    await api.inject('POST', '/v1/event-types', {
      token: ADMIN_TOKEN,
      body: { name: 'order.paid', description: 'x', schema, example: { amount: 5 } },
    });
    await api.inject('POST', '/v1/event-types', {
      token: ADMIN_TOKEN,
      body: { name: 'plain.type', description: 'x' },
    });
    const payloadOf = async (body: unknown) => {
      const res = await api.inject('POST', `/v1/destinations/${dst}/test`, { token: tenant.key, body });
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json<AcceptedEvent>().id;
      return (await api.inject('GET', `/v1/events/${id}`, { token: tenant.key })).json<Event>().payload;
    };
    assert.deepEqual(await payloadOf({ type: 'order.paid' }), { amount: 5 });
    assert.deepEqual(await payloadOf({ type: 'plain.type' }), { test: true });
    assert.deepEqual(await payloadOf({ type: 'unlisted.type' }), { test: true });
    assert.deepEqual(await payloadOf({ type: 'order.paid', payload: { amount: 7 } }), { amount: 7 });
    assert.deepEqual(await payloadOf({}), (await payloadOf(null)) as object);
    const url = `/v1/destinations/${dst}/test`;
    assertError(
      await api.inject('POST', url, {
        token: tenant.key,
        body: { type: 'order.paid', payload: { amount: 'x' } },
      }),
      400,
      'validation_failed',
      '/payload/amount',
    );
    assertError(
      await api.inject('POST', url, { token: tenant.key, body: { payload: { x: 1 } } }),
      400,
      'validation_failed',
    );
    assertError(
      await api.inject('POST', url, { token: tenant.key, body: { type: 'sluice.nope' } }),
      400,
      'validation_failed',
      'type',
    );
    assertError(
      await api.inject('POST', url, { token: tenant.key, body: { type: 'a*' } }),
      400,
      'validation_failed',
      'type',
    );
    assertError(
      await api.inject('POST', url, { token: tenant.key, body: { bogus: 1 } }),
      400,
      'validation_failed',
    );
  });
});

describe('the portal page', () => {
  it("/portal/ and deep links: the dashboard's page, framed per SLUICE_PORTAL_FRAME_ANCESTORS; /dashboard/ never", async () => {
    const api = await testApi({ portalFrameAncestors: "'self' https://app.example.com" });
    try {
      for (const path of ['/portal/', '/portal/destinations/x']) {
        const res = await api.inject('GET', path);
        const csp = String(res.headers['content-security-policy']);
        assert.match(csp, /frame-ancestors 'self' https:\/\/app\.example\.com(;|$)/, path);
        assert.match(csp, /img-src [^;]*https:/);
        assert.match(csp, /img-src [^;]*data:/);
      }
      assert.equal((await api.inject('GET', '/portal')).headers.location, '/portal/');
      const dashboard = await api.inject('GET', '/dashboard/');
      assert.match(String(dashboard.headers['content-security-policy']), /frame-ancestors 'none'/);
    } finally {
      await api.close();
    }
  });
});

/**
 * Portal links' tokens in the shape under test (docs/api.md "Portal links", "Test event"): a
 * token is a v1 bearer token of its tenant only — other tenants' and, for a narrowed link,
 * unlisted destinations' ids answer 404 (their deliveries and events too; lists leave them
 * out); a `read` link refuses every write route with 403; admin, tenant, portal-link and
 * event-posting routes are refused; an expired or revoked link, or a deleted tenant's, is 401
 * at its next request — in the distributed shape in another API replica too. The test event
 * reaches its destination only, paced by its limit; the signing secret's rights; the portal
 * page's frame-ancestors beside the dashboard's.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { ROUTES, template } from './helpers/client.ts';
import { twoApiReplicas } from './helpers/replicas.ts';
import { SHAPE } from './helpers/shape.ts';
import {
  type Accepted,
  type Client,
  createDestination,
  createTenant,
  harness,
  postEvent,
  type TestBox,
  waitUntil,
} from './helpers/sluice.ts';

interface Link {
  id: string;
  url: string;
  token: string;
  expiresAt: string;
}

const RATE = { limit: 5, period: 'second' } as const;
const NO_ID = (prefix: string) => `${prefix}_${'0'.repeat(26)}`;

async function createLink(c: Client, token: string, body: Record<string, unknown> = {}): Promise<Link> {
  const res = await c.api<Link>('POST', '/v1/portal-links', body, token);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

const status = async (c: Client, method: string, path: string, token: string, body?: unknown) =>
  (await c.api(method, path, body ?? (method === 'GET' || method === 'DELETE' ? undefined : {}), token))
    .status;

/** Rows of the tables a write would change: equal before and after means nothing changed. */
async function rows(box: TestBox): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const table of ['tenants', 'destinations', 'events', 'deliveries', 'portal_links', 'event_types'])
    out.push(await box.query(`SELECT * FROM ${table} ORDER BY 1`));
  return out;
}

/** A tenant with two destinations (one paused, with a delivery each) and another tenant's. */
async function world(box: TestBox, rcvUrl: (name: string) => string) {
  const admin = box.adminToken;
  const a = await createTenant(box, admin, 'acme');
  const b = await createTenant(box, admin, 'globex');
  const mine = await createDestination(box, a.apiKey, { url: rcvUrl('mine'), rateLimit: RATE });
  const other = await createDestination(box, a.apiKey, { url: rcvUrl('other'), rateLimit: RATE });
  const theirs = await createDestination(box, b.apiKey, { url: rcvUrl('theirs'), rateLimit: RATE });
  for (const d of [mine, other, theirs])
    await box.api('POST', `/v1/destinations/${d.id}/pause`, undefined, d === theirs ? b.apiKey : a.apiKey);
  const toMine = await postEvent(box, a.apiKey, { type: 'order.paid', payload: {}, destinationId: mine.id });
  const toOther = await postEvent(box, a.apiKey, {
    type: 'order.paid',
    payload: {},
    destinationId: other.id,
  });
  const toTheirs = await postEvent(box, b.apiKey, {
    type: 'order.paid',
    payload: {},
    destinationId: theirs.id,
  });
  return { admin, a, b, mine, other, theirs, toMine, toOther, toTheirs };
}

const dlv = (accepted: Accepted) => accepted.deliveries[0]?.id ?? '';

describe('portal tokens', () => {
  it('scope: other tenants’ and unlisted destinations answer 404, with their deliveries and events; lists are filtered', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const w = await world(box, (n) => rcv.url(n));
    const whole = (await createLink(box, w.a.apiKey)).token;
    const narrowed = (await createLink(box, w.a.apiKey, { destinationIds: [w.mine.id] })).token;

    const hidden = (token: string, d: string, event: Accepted) =>
      [
        ['GET', `/v1/destinations/${d}`],
        ['PATCH', `/v1/destinations/${d}`, { name: 'x' }],
        ['DELETE', `/v1/destinations/${d}`],
        ['POST', `/v1/destinations/${d}/pause`],
        ['POST', `/v1/destinations/${d}/resume`],
        ['POST', `/v1/destinations/${d}/rotate-secret`],
        ['GET', `/v1/destinations/${d}/secret`],
        ['POST', `/v1/destinations/${d}/replay`, { status: 'dead' }],
        ['POST', `/v1/destinations/${d}/test`],
        ['GET', `/v1/destinations/${d}/stats`],
        ['GET', `/v1/destinations/${d}/health`],
        ['GET', `/v1/events/${event.id}`],
        ['GET', `/v1/deliveries/${dlv(event)}`],
        ['POST', `/v1/deliveries/${dlv(event)}/retry`],
      ].map(([method, path, body]) => ({ token, method: method as string, path: path as string, body }));
    const before = await rows(box);
    for (const r of [
      ...hidden(whole, w.theirs.id, w.toTheirs),
      ...hidden(narrowed, w.theirs.id, w.toTheirs),
      ...hidden(narrowed, w.other.id, w.toOther),
    ])
      assert.equal(await status(box, r.method, r.path, r.token, r.body), 404, `${r.method} ${r.path}`);
    assert.deepEqual(await rows(box), before, 'nothing changed');

    const ids = async (path: string, token: string) =>
      (await box.api<{ data: { id: string }[] }>('GET', path, undefined, token)).body.data.map((x) => x.id);
    assert.deepEqual(await ids('/v1/destinations', narrowed), [w.mine.id]);
    assert.deepEqual(await ids('/v1/destinations/stats', narrowed), [w.mine.id]);
    assert.deepEqual(await ids('/v1/deliveries', narrowed), [dlv(w.toMine)]);
    assert.deepEqual(await ids(`/v1/deliveries?destinationId=${w.other.id}`, narrowed), []);
    assert.deepEqual(await ids('/v1/events', narrowed), [w.toMine.id]);
    assert.deepEqual(await ids('/v1/destinations', whole), [w.other.id, w.mine.id]);
    assert.deepEqual(await ids('/v1/events', whole), [w.toOther.id, w.toMine.id]);
    assert.equal(await status(box, 'GET', `/v1/destinations?tenantId=${w.b.id}`, whole), 404);
    assert.equal(await status(box, 'GET', `/v1/destinations/${w.mine.id}`, narrowed), 200);
    assert.equal(await status(box, 'GET', `/v1/events/${w.toMine.id}`, narrowed), 200);
    assert.equal(await status(box, 'GET', '/v1/event-types', narrowed), 200);
    const who = await box.api<{ role: string; tenant: { id: string } }>(
      'GET',
      '/v1/whoami',
      undefined,
      narrowed,
    );
    assert.deepEqual([who.body.role, who.body.tenant.id], ['portal', w.a.id]);
    assert.equal(
      await status(box, 'POST', '/v1/destinations', narrowed, { url: rcv.url('new'), rateLimit: RATE }),
      403,
      'a narrowed link adds no destination',
    );
    for (const eventTypes of [['*'], ['sluice.*']]) {
      const res = await box.api('PATCH', `/v1/destinations/${w.mine.id}`, { eventTypes }, narrowed);
      assert.equal(res.status, 403, `a narrowed link may not widen what it receives: ${eventTypes}`);
    }
    assert.equal(
      await status(box, 'PATCH', `/v1/destinations/${w.mine.id}`, narrowed, { name: 'mine' }),
      200,
    );
    assert.equal(
      await status(box, 'POST', '/v1/destinations', whole, { url: rcv.url('new'), rateLimit: RATE }),
      201,
    );
  });

  it('read refuses every write route with 403; no portal token may use admin, tenant, portal-link or event-posting routes', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const w = await world(box, (n) => rcv.url(n));
    const read = (await createLink(box, w.a.apiKey, { access: 'read' })).token;
    const manage = (await createLink(box, w.a.apiKey)).token;
    const link = await createLink(box, w.a.apiKey);
    const concrete = (route: string) => {
      const [method, path] = route.split(' ') as [string, string];
      const id = path.startsWith('/v1/tenants')
        ? w.a.id
        : path.startsWith('/v1/events/')
          ? w.toMine.id
          : path.startsWith('/v1/deliveries')
            ? dlv(w.toMine)
            : path.startsWith('/v1/portal-links')
              ? link.id
              : w.mine.id;
      return {
        method,
        path: path.replace('{id}', id).replace('{keyId}', NO_ID('key')).replace('{name}', 'order.paid'),
      };
    };
    const before = await rows(box);
    const writes = ROUTES.filter((r) => !r.startsWith('GET '));
    assert.ok(writes.length >= 20, `${writes.length} write routes`);
    for (const route of writes) {
      const { method, path } = concrete(route);
      assert.equal(await status(box, method, path, read), 403, `read: ${route}`);
    }
    assert.equal(
      await status(box, 'GET', `/v1/destinations/${w.mine.id}/secret`, read),
      403,
      'read: no secret',
    );
    const refused = ROUTES.filter(
      (r) =>
        r.includes('/v1/tenants') ||
        r.includes('/v1/portal-links') ||
        r === 'POST /v1/events' ||
        r === 'POST /v1/events/batch' ||
        (r.includes('/v1/event-types') && !r.startsWith('GET ')),
    );
    for (const route of refused) {
      const { method, path } = concrete(route);
      for (const [what, token] of [
        ['read', read],
        ['manage', manage],
      ] as const)
        assert.equal(await status(box, method, path, token), 403, `${what}: ${route}`);
    }
    assert.deepEqual(await rows(box), before, 'nothing changed');
    assert.equal(template(`/v1/portal-links/${link.id}`), '/v1/portal-links/{id}');
    assert.equal(
      await status(box, 'POST', `/v1/destinations/${w.mine.id}/resume`, manage),
      200,
      'manage writes',
    );
  });

  it('the signing secret: the tenant key, the admin token and a manage link; not a read link', {
    timeout: 30_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const w = await world(box, (n) => rcv.url(n));
    const path = `/v1/destinations/${w.mine.id}/secret`;
    const manage = (await createLink(box, w.a.apiKey)).token;
    const read = (await createLink(box, w.admin, { tenantId: w.a.id, access: 'read' })).token;
    const secrets = await Promise.all(
      [w.a.apiKey, w.admin, manage].map(async (token) => {
        const res = await box.api<{ secret: string; previous: unknown[] }>('GET', path, undefined, token);
        assert.equal(res.status, 200);
        return res.body;
      }),
    );
    assert.deepEqual(secrets[1], secrets[0]);
    assert.deepEqual(secrets[2], { secret: w.mine.secret, previous: [] });
    assert.equal(await status(box, 'GET', path, read), 403);
  });

  it('expired → 401; revoked → 401 at once; a deleted tenant’s links → 401', {
    timeout: 60_000,
  }, async (t) => {
    const { box } = await harness(t);
    const a = await createTenant(box, box.adminToken);
    const short = await createLink(box, a.apiKey, { expiresInSeconds: 10 });
    const kept = await createLink(box, a.apiKey);
    const revoked = await createLink(box, a.apiKey);
    assert.equal(await status(box, 'GET', '/v1/destinations', short.token), 200);
    assert.equal(await status(box, 'GET', '/v1/destinations', revoked.token), 200);
    assert.equal(await status(box, 'DELETE', `/v1/portal-links/${revoked.id}`, a.apiKey), 204);
    assert.equal(await status(box, 'GET', '/v1/destinations', revoked.token), 401, 'revoked: at once');
    await waitUntil(() => Date.now() > Date.parse(short.expiresAt), 15_000, 'the link to expire', 100);
    const expired = await box.api<{ error: { code: string; message: string } }>(
      'GET',
      '/v1/destinations',
      undefined,
      short.token,
    );
    assert.deepEqual([expired.status, expired.body.error.code], [401, 'unauthorized']);
    assert.match(expired.body.error.message, /expired/);
    const listed = await box.api<{ data: { id: string; expired: boolean }[] }>(
      'GET',
      '/v1/portal-links',
      undefined,
      a.apiKey,
    );
    assert.deepEqual(
      listed.body.data.map((l) => [l.id, l.expired]),
      [
        [kept.id, false],
        [short.id, true],
      ],
    );
    assert.equal(await status(box, 'GET', '/v1/destinations', kept.token), 200);
    assert.equal(await status(box, 'DELETE', `/v1/tenants/${a.id}`, box.adminToken), 204);
    assert.equal(await status(box, 'GET', '/v1/destinations', kept.token), 401, "a deleted tenant's link");
  });

  it('two API replicas: a link warm in one is refused there once the other revokes it', {
    timeout: 90_000,
    skip: SHAPE !== 'distributed' && 'several API replicas run in the distributed shape only',
  }, async (t) => {
    const { a, b, adminToken } = await twoApiReplicas(t);
    const tenant = await createTenant(a, adminToken);
    const link = await createLink(a, tenant.apiKey);
    const other = await createLink(a, tenant.apiKey);
    for (let n = 0; n < 5; n++)
      assert.equal(await status(b, 'GET', '/v1/destinations', link.token), 200, 'warm in b');
    assert.equal(await status(a, 'DELETE', `/v1/portal-links/${link.id}`, tenant.apiKey), 204);
    assert.equal(await status(b, 'GET', '/v1/destinations', link.token), 401, 'refused in b at once');
    assert.equal(await status(b, 'GET', '/v1/destinations', other.token), 200);
    assert.equal(await status(a, 'DELETE', `/v1/tenants/${tenant.id}`, adminToken), 204);
    assert.equal(
      await status(b, 'GET', '/v1/destinations', other.token),
      401,
      "the deleted tenant's link, in b",
    );
  });

  it('the test event: to that destination only, whatever its eventTypes, paced by its limit', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const a = await createTenant(box, box.adminToken);
    const target = await createDestination(box, a.apiKey, {
      url: rcv.url('target'),
      rateLimit: { limit: 1, period: 'second' },
      eventTypes: ['never.*'],
    });
    await createDestination(box, a.apiKey, { url: rcv.url('everything'), rateLimit: RATE });
    const schema = { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } };
    await box.api(
      'POST',
      '/v1/event-types',
      { name: 'order.paid', description: 'An order was paid.', schema, example: { amount: 5 } },
      box.adminToken,
    );
    const manage = (await createLink(box, a.apiKey)).token;
    const send = async (token: string, body?: unknown) => {
      const res = await box.api<Accepted>('POST', `/v1/destinations/${target.id}/test`, body, token);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.deepEqual(
        res.body.deliveries.map((d) => d.destinationId),
        [target.id],
      );
      return res.body.id;
    };
    const sent = [
      await send(a.apiKey),
      await send(manage, { type: 'order.paid' }),
      await send(a.apiKey, { type: 'order.paid', payload: { amount: 7 } }),
      await send(manage, { type: 'plain.type' }),
    ];
    await rcv.waitFor(() => rcv.deliveredIds(rcv.path('target')).size === 4, 20_000, 'four test events');
    const arrivals = rcv.arrivals(rcv.path('target'));
    const bodies = new Map(arrivals.map((x) => [String(x.headers['webhook-id']), JSON.parse(x.body)]));
    assert.deepEqual(bodies.get(sent[0] ?? '')?.data, { test: true });
    assert.equal(bodies.get(sent[0] ?? '')?.destinationId, target.id);
    assert.deepEqual(bodies.get(sent[1] ?? ''), { amount: 5 }, "the catalog's example");
    assert.deepEqual(bodies.get(sent[2] ?? ''), { amount: 7 }, 'the payload given');
    assert.deepEqual(bodies.get(sent[3] ?? ''), { test: true }, 'a type without an example');
    const times = rcv.times(rcv.path('target'));
    assert.ok(times.length >= 4);
    assert.ok(
      (times[3] ?? 0) - (times[0] ?? 0) >= 2_500,
      `one a second: ${times.map((x) => x - (times[0] ?? 0)).join(', ')} ms`,
    );
    assert.equal(rcv.arrivals(rcv.path('everything')).length, 0, 'no other destination');
    const bad = await box.api<{ error: { code: string; details: { path: string }[] } }>(
      'POST',
      `/v1/destinations/${target.id}/test`,
      { type: 'order.paid', payload: { amount: 'x' } },
      a.apiKey,
    );
    assert.deepEqual(
      [bad.status, bad.body.error.code, bad.body.error.details.map((d) => d.path)],
      [400, 'validation_failed', ['/payload/amount']],
    );
  });

  it("/portal/ carries SLUICE_PORTAL_FRAME_ANCESTORS and img-src https: data:; /dashboard/ keeps frame-ancestors 'none'", {
    timeout: 30_000,
  }, async (t) => {
    const ancestors = "'self' http://127.0.0.1:8123";
    const { box } = await harness(t, { SLUICE_PORTAL_FRAME_ANCESTORS: ancestors });
    const agent = new Agent({ keepAliveTimeout: 1_000 });
    t.after(() => agent.close());
    const csp = async (path: string) => {
      const res = await request(`${box.url}${path}`, { dispatcher: agent });
      await res.body.text();
      return String(res.headers['content-security-policy']);
    };
    for (const path of ['/portal/', '/portal/destinations/dst_x']) {
      const policy = await csp(path);
      assert.match(
        policy,
        new RegExp(`frame-ancestors ${ancestors.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(;|$)`),
        path,
      );
      assert.match(policy, /img-src [^;]*https:/, path);
      assert.match(policy, /img-src [^;]*data:/, path);
    }
    assert.match(await csp('/dashboard/'), /frame-ancestors 'none'/);
    const link = await createLink(box, (await createTenant(box, box.adminToken)).apiKey);
    assert.ok(link.url.startsWith(`${box.url}/portal/#token=`), link.url);
  });
});

/**
 * What the API reports about a destination's work, through `app.inject`: its stats (backlog,
 * outcomes, the compliance audit, per second), the overview of every destination, and the
 * backlog alerts firing. Outcomes and alerts are written through the store, as the delivery
 * side and the alerter write them.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Alert, Destination, DestinationOverview, DestinationStats, Page } from '@sluice/client';
import { ADMIN_TOKEN, assertError, DESTINATION, settle, type TestApi, testApi } from '../test-app.ts';

describe('stats, overview and alerts', () => {
  let api: TestApi;
  let acme: { id: string; key: string };
  let globex: { id: string; key: string };
  let busy: string;
  let idle: string;
  let elsewhere: string;

  before(async () => {
    api = await testApi();
    acme = await api.tenant('acme');
    globex = await api.tenant('globex');
    const make = async (token: string, body: unknown = DESTINATION) =>
      (await api.inject('POST', '/v1/destinations', { token, body })).json<Destination>().id;
    busy = await make(acme.key, { ...DESTINATION, rateLimit: { limit: 10, period: 'second', burst: 20 } });
    idle = await make(acme.key);
    elsewhere = await make(globex.key);
    const send = () =>
      api.inject('POST', '/v1/events', {
        token: acme.key,
        body: { type: 'a.b', payload: {}, destinationId: busy },
      });
    for (let i = 0; i < 3; i++) await send();
    await settle(api.store, busy, 200);
    await send();
    await settle(api.store, busy, 410);
    await send();
    await send();
  });
  after(() => api.close());

  it("a destination's stats: backlog, outcomes, the audit and each second", async () => {
    const res = await api.inject('GET', `/v1/destinations/${busy}/stats?seconds=60`, { token: acme.key });
    assert.equal(res.statusCode, 200, res.body);
    const stats = res.json<DestinationStats>();
    const { perSecond, ...rest } = stats;
    assert.deepEqual(rest, {
      rateLimit: { limit: 10, period: 'second', burst: 20 },
      state: 'active',
      pending: 2,
      queued: 0,
      inFlight: 0,
      oldestPendingAgeMs: rest.oldestPendingAgeMs,
      delivered: 3,
      dead: 1,
      maxSentInAnyWindow: 4,
      bucketRefusals: 0,
      effectiveLimit: 10,
      backingOff: false,
      limitChanges: [],
    });
    assert.ok(rest.oldestPendingAgeMs >= 0 && rest.oldestPendingAgeMs < 60_000);
    assert.ok(perSecond.length >= 60 && perSecond.length <= 62, `${perSecond.length} seconds`);
    assert.equal(
      perSecond.reduce((sum, s) => sum + s.sent, 0),
      4,
    );
    for (const s of perSecond) assert.ok(!Number.isNaN(Date.parse(s.t)));
    const quiet = (
      await api.inject('GET', `/v1/destinations/${idle}/stats`, { token: acme.key })
    ).json<DestinationStats>();
    assert.equal(quiet.bucketRefusals, null, 'no burst: nothing to refuse');
    assert.equal(quiet.perSecond.length >= 300, true, 'the default span is 300 s');
  });

  it("stats: the span's changes of the rate limit, each with before and after", async () => {
    const patch = (body: unknown) =>
      api.inject('PATCH', `/v1/destinations/${idle}`, { token: acme.key, body });
    const start = Date.now();
    assert.equal((await patch({ rateLimit: { limit: 5, period: 'second' } })).statusCode, 200);
    assert.equal((await patch({ name: 'renamed' })).statusCode, 200);
    assert.equal((await patch({ rateLimit: { limit: 2, period: 'minute' } })).statusCode, 200);
    const stats = (
      await api.inject('GET', `/v1/destinations/${idle}/stats?seconds=60`, { token: acme.key })
    ).json<DestinationStats>();
    assert.deepEqual(
      stats.limitChanges.map(({ from, to }) => ({ from, to })),
      [
        { from: DESTINATION.rateLimit, to: { limit: 5, period: 'second' } },
        { from: { limit: 5, period: 'second' }, to: { limit: 2, period: 'minute' } },
      ],
    );
    for (const c of stats.limitChanges)
      assert.ok(Date.parse(c.at) >= start - 1_000 && Date.parse(c.at) <= Date.now());
    assert.deepEqual(stats.rateLimit, { limit: 2, period: 'minute' });
  });

  it('stats: the span is 1 s to a day; another tenant’s destination is a 404', async () => {
    const get = (query: string, token = acme.key) =>
      api.inject('GET', `/v1/destinations/${busy}/stats${query}`, { token });
    assertError(await get('?seconds=0'), 400, 'validation_failed', 'query.seconds');
    assertError(await get('?seconds=86401'), 400, 'validation_failed', 'query.seconds');
    assertError(await get('?seconds=ten'), 400, 'validation_failed', 'query.seconds');
    assertError(await get('', globex.key), 404, 'not_found');
    assert.equal((await get('', ADMIN_TOKEN)).statusCode, 200);
  });

  it('overview: each destination of the tenant with its backlog and outcomes', async () => {
    const res = await api.inject('GET', '/v1/destinations/stats?seconds=3600', { token: acme.key });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<Page<DestinationOverview>>();
    assert.deepEqual(
      page.data.map((d) => [d.id, d.stats.pending, d.stats.delivered, d.stats.dead]),
      [
        [idle, 0, 0, 0],
        [busy, 2, 3, 1],
      ],
    );
    assert.equal(page.nextCursor, null);
    const first = page.data[1];
    assert.equal(first?.stats.effectiveLimit, 10);
    assert.equal(first?.url, DESTINATION.url, 'each row is the whole destination');
    const all = await api.inject('GET', '/v1/destinations/stats?limit=10', { token: ADMIN_TOKEN });
    assert.deepEqual(
      all.json<Page<DestinationOverview>>().data.map((d) => d.id),
      [elsewhere, idle, busy],
    );
    assertError(
      await api.inject('GET', '/v1/destinations/stats?seconds=0', { token: acme.key }),
      400,
      'validation_failed',
      'query.seconds',
    );
  });

  it('alerts: none until one is raised; a tenant sees its own, the admin every tenant’s', async () => {
    const list = async (token: string, query = '') => {
      const res = await api.inject('GET', `/v1/alerts${query}`, { token });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ data: Alert[] }>().data;
    };
    assert.deepEqual(await list(acme.key), []);
    const raisedAt = Date.now();
    await api.store.raiseAlert(
      { destinationId: busy, tenantId: acme.id, kind: 'pending_count', threshold: 1, value: 2, raisedAt },
      null,
      raisedAt,
    );
    await api.store.raiseAlert(
      {
        destinationId: elsewhere,
        tenantId: globex.id,
        kind: 'pending_age',
        threshold: 60,
        value: 90,
        raisedAt,
      },
      null,
      raisedAt,
    );
    assert.deepEqual(await list(acme.key), [
      {
        destinationId: busy,
        tenantId: acme.id,
        kind: 'pending_count',
        threshold: 1,
        value: 2,
        raisedAt: new Date(raisedAt).toISOString(),
      },
    ]);
    assert.equal((await list(ADMIN_TOKEN)).length, 2);
    assert.deepEqual(
      (await list(ADMIN_TOKEN, `?tenantId=${globex.id}`)).map((a) => a.kind),
      ['pending_age'],
    );
    assertError(
      await api.inject('GET', '/v1/alerts?limit=1', { token: acme.key }),
      400,
      'validation_failed',
      'query.limit',
    );
  });
});

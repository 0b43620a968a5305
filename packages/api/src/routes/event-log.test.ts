/** `GET /v1/events` through `app.inject`: the tenant's event log, its filters, pages and bad input. */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Destination, LoggedEvent, Page } from '@sluice/client';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

describe('GET /v1/events', () => {
  let api: TestApi;
  let tenant: { id: string; key: string };
  let other: { id: string; key: string };
  const sent: string[] = [];
  let a: Destination;
  let b: Destination;

  before(async () => {
    api = await testApi();
    tenant = await api.tenant();
    other = await api.tenant();
    const create = async (t: { key: string }) =>
      (await api.inject('POST', '/v1/destinations', { token: t.key, body: DESTINATION })).json<Destination>();
    a = await create(tenant);
    b = await create(tenant);
    const theirs = await create(other);
    const send = async (key: string, type: string, destinationId: string) => {
      const res = await api.inject('POST', '/v1/events', {
        token: key,
        body: { type, payload: { type }, destinationId },
      });
      assert.equal(res.statusCode, 202, res.body);
      return res.json<{ id: string }>().id;
    };
    sent.push(await send(tenant.key, 'order.created', a.id));
    sent.push(await send(tenant.key, 'order.paid', b.id));
    sent.push(await send(tenant.key, 'invoice.sent', a.id));
    await send(other.key, 'order.created', theirs.id);
  });
  after(() => api.close());

  const list = async (query: string, token = tenant.key) => {
    const res = await api.inject('GET', `/v1/events${query}`, { token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Page<LoggedEvent>>();
  };

  it("the tenant's events, newest first, without their payloads (their size instead) and deliveries", async () => {
    const page = await list('');
    assert.deepEqual(
      page.data.map((e) => e.id),
      [...sent].reverse(),
    );
    assert.equal(page.nextCursor, null);
    assert.deepEqual(Object.keys(page.data[0] ?? {}).sort(), [
      'createdAt',
      'id',
      'idempotencyKey',
      'payloadBytes',
      'type',
    ]);
    assert.equal(page.data[0]?.payloadBytes, Buffer.byteLength(JSON.stringify({ type: 'invoice.sent' })));
  });

  it('a page stays small whatever its payloads weigh; GET /v1/events/:id has the payload', async () => {
    const big = await testApi({ maxPayloadBytes: 2 * 1024 * 1024, maxRequestBytes: 4 * 1024 * 1024 });
    try {
      const { key } = await big.tenant();
      await big.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
      const payload = { blob: 'é'.repeat(900_000) };
      const heavy = await big.inject('POST', '/v1/events', {
        token: key,
        body: { type: 'big.one', payload },
      });
      assert.equal(heavy.statusCode, 202, heavy.body);
      for (let n = 0; n < 49; n++) {
        await big.inject('POST', '/v1/events', { token: key, body: { type: 'small.one', payload: { n } } });
      }
      const res = await big.inject('GET', '/v1/events?limit=50', { token: key });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.body.length < 10_000, `a page of 50: ${res.body.length} bytes`);
      const page = res.json<Page<LoggedEvent>>();
      assert.equal(page.data.length, 50);
      const logged = page.data.find((e) => e.type === 'big.one');
      assert.equal(logged?.payloadBytes, Buffer.byteLength(JSON.stringify(payload)));
      const one = await big.inject('GET', `/v1/events/${logged?.id}`, { token: key });
      assert.deepEqual(one.json<{ payload: unknown }>().payload, payload);
    } finally {
      await big.close();
    }
  });

  it('by type, prefix.*, *, destination and time; in pages', async () => {
    assert.deepEqual(
      (await list('?type=order.paid')).data.map((e) => e.id),
      [sent[1]],
    );
    assert.deepEqual(
      (await list('?type=order.*')).data.map((e) => e.id),
      [sent[1], sent[0]],
    );
    assert.equal((await list('?type=*')).data.length, 3);
    assert.deepEqual(
      (await list(`?destinationId=${a.id}`)).data.map((e) => e.id),
      [sent[2], sent[0]],
    );
    const all = (await list('')).data;
    const middle = all[1]?.createdAt ?? '';
    assert.ok((await list(`?since=${middle}`)).data.every((e) => e.createdAt >= middle));
    assert.ok((await list(`?until=${middle}`)).data.every((e) => e.createdAt <= middle));
    const first = await list('?limit=2');
    assert.equal(first.data.length, 2);
    assert.ok(first.nextCursor);
    const second = await list(`?limit=2&cursor=${first.nextCursor}`);
    assert.deepEqual(
      second.data.map((e) => e.id),
      [sent[0]],
    );
    assert.equal(second.nextCursor, null);
  });

  it('the admin token names the tenant with tenantId', async () => {
    assert.equal((await list(`?tenantId=${tenant.id}`, ADMIN_TOKEN)).data.length, 3);
    assert.equal((await list(`?tenantId=${other.id}`, ADMIN_TOKEN)).data.length, 1);
    assertError(
      await api.inject('GET', '/v1/events', { token: ADMIN_TOKEN }),
      400,
      'validation_failed',
      'query.tenantId',
    );
  });

  it('bad input: 401, 404 for another tenant, 400 for a bad filter or cursor', async () => {
    assertError(await api.inject('GET', '/v1/events'), 401, 'unauthorized');
    assertError(await api.inject('GET', '/v1/events', { token: 'sk_wrong' }), 401, 'unauthorized');
    assertError(
      await api.inject('GET', `/v1/events?tenantId=${other.id}`, { token: tenant.key }),
      404,
      'not_found',
    );
    assertError(
      await api.inject('GET', `/v1/events?tenantId=ten_${'0'.repeat(26)}`, { token: ADMIN_TOKEN }),
      404,
      'not_found',
    );
    const bad = (query: string, path: string) =>
      api
        .inject('GET', `/v1/events${query}`, { token: tenant.key })
        .then((res) => assertError(res, 400, 'validation_failed', path));
    await bad('?type=order.', 'query.type');
    await bad('?type=a*', 'query.type');
    await bad('?destinationId=x', 'query.destinationId');
    await bad('?since=yesterday', 'query.since');
    await bad('?until=1', 'query.until');
    await bad('?limit=0', 'query.limit');
    await bad('?cursor=abc', 'query.cursor');
    await bad('?status=dead', 'query.status');
  });
});

/**
 * Tenant isolation and authentication, through the client: a tenant's key on another
 * tenant's resources answers exactly what it answers for ids that do not exist (404, never
 * 403: no existence oracle) and changes nothing; no token or a wrong one is a 401 on every
 * route; a tenant key on an admin route is a 403; the admin token acts on any tenant, and
 * for one with `?tenantId=`.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreateDestinationInput, Sluice } from '@sluice/client';
import {
  collect,
  fileBox,
  quietDestinationWithDeadDelivery,
  ROUTES,
  rejectsWith,
  snapshot,
  unknownLike,
} from './helpers/client.ts';

const get = fileBox();

interface Side {
  api: Sluice;
  key: string;
  tenantId: string;
  dst: string;
  evt: string;
  dlv: string;
}

let a: Side;
let b: Side;

async function side(name: string): Promise<Side> {
  const { tenant, api } = await get().tenant(name);
  const { dst, evt, dlv } = await quietDestinationWithDeadDelivery(get(), api, name);
  return { api, key: tenant.apiKey, tenantId: tenant.id, dst, evt, dlv };
}

/** A call by tenant `a` naming an id: run with one of `b`'s, and with an id nobody has. */
type Probe = [name: string, call: (id: string) => Promise<unknown>, theirs: () => string];

const probes = (): Probe[] => {
  const named = (id: string) => ({ type: 'order.paid', payload: {}, destinationId: id });
  return [
    ['GET /v1/destinations/:id', (id) => a.api.destinations.get(id), () => b.dst],
    ['PATCH /v1/destinations/:id', (id) => a.api.destinations.update(id, { name: 'mine' }), () => b.dst],
    ['DELETE /v1/destinations/:id', (id) => a.api.destinations.delete(id), () => b.dst],
    ['POST /v1/destinations/:id/pause', (id) => a.api.destinations.pause(id), () => b.dst],
    ['POST /v1/destinations/:id/resume', (id) => a.api.destinations.resume(id), () => b.dst],
    ['POST /v1/destinations/:id/rotate-secret', (id) => a.api.destinations.rotateSecret(id), () => b.dst],
    ['POST /v1/destinations/:id/replay', (id) => a.api.destinations.replay(id), () => b.dst],
    ['GET /v1/destinations/:id/stats', (id) => a.api.destinations.stats(id), () => b.dst],
    ['POST /v1/events (destinationId)', (id) => a.api.events.send(named(id)), () => b.dst],
    [
      'POST /v1/events (destinationIds)',
      (id) => a.api.events.send({ type: 'order.paid', payload: {}, destinationIds: [a.dst, id] }),
      () => b.dst,
    ],
    ['POST /v1/events/batch', (id) => a.api.events.sendBatch([named(a.dst), named(id)]), () => b.dst],
    ['GET /v1/events/:id', (id) => a.api.events.get(id), () => b.evt],
    ['GET /v1/deliveries/:id', (id) => a.api.deliveries.get(id), () => b.dlv],
    ['POST /v1/deliveries/:id/retry', (id) => a.api.deliveries.retry(id), () => b.dlv],
    // Tenant-scoped routes, naming another tenant with `?tenantId=`.
    [
      'POST /v1/destinations?tenantId=',
      (id) =>
        a.api.destinations.create(
          { url: get().rcv.url('x'), rateLimit: { limit: 1, period: 'second' } },
          { tenantId: id },
        ),
      () => b.tenantId,
    ],
    [
      'GET /v1/destinations?tenantId=',
      (id) => a.api.destinations.list({}, { tenantId: id }),
      () => b.tenantId,
    ],
    [
      'GET /v1/destinations/:id/stats?tenantId=',
      (id) => a.api.destinations.stats(a.dst, {}, { tenantId: id }),
      () => b.tenantId,
    ],
    [
      'POST /v1/events?tenantId=',
      (id) => a.api.events.send(named(a.dst), { tenantId: id }),
      () => b.tenantId,
    ],
    [
      'POST /v1/events/batch?tenantId=',
      (id) => a.api.events.sendBatch([named(a.dst)], { tenantId: id }),
      () => b.tenantId,
    ],
    ['GET /v1/deliveries?tenantId=', (id) => a.api.deliveries.list({}, { tenantId: id }), () => b.tenantId],
    ['GET /v1/events?tenantId=', (id) => a.api.events.list({}, { tenantId: id }), () => b.tenantId],
  ];
};

describe('isolation', () => {
  it('two tenants, each with a paused destination holding a dead delivery', { timeout: 30_000 }, async () => {
    a = await side('a');
    b = await side('b');
  });

  describe("another tenant's id → 404 not_found, as for an id nobody has; nothing changes", () => {
    for (const [name, call, theirs] of probes()) {
      it(name, async () => {
        const before = await snapshot(get());
        const id = theirs();
        const err = await rejectsWith(call(id), 404, 'not_found', `${name} with their id`);
        const none = await rejectsWith(call(unknownLike(id)), 404, 'not_found', `${name} with no one's id`);
        assert.equal(err.message, none.message, 'the same answer as for an id nobody has');
        assert.deepEqual(await snapshot(get()), before, 'the store changed');
      });
    }
  });

  it("lists show only the tenant's own rows; another's ids as filters match nothing", async () => {
    const dsts = await collect(a.api.destinations.listAll());
    assert.deepEqual(
      dsts.map((d) => d.id),
      [a.dst],
    );
    const dlvs = await collect(a.api.deliveries.listAll());
    assert.ok(dlvs.length > 0 && dlvs.every((d) => d.destinationId === a.dst));
    for (const filter of [{ destinationId: b.dst }, { eventId: b.evt }]) {
      const theirs = await a.api.deliveries.list(filter);
      assert.deepEqual(theirs, { data: [], nextCursor: null }, JSON.stringify(filter));
    }
    const event = await a.api.events.send({ type: 'order.paid', payload: {} });
    assert.deepEqual(
      event.deliveries.map((d) => d.destinationId),
      [a.dst],
      "a fan-out reaches the tenant's own destinations only",
    );
  });

  describe('no token, a wrong token → 401 unauthorized on every route', () => {
    const wrong: [string, () => Record<string, string>][] = [
      ['no authorization header', () => ({})],
      ['a random key', () => ({ authorization: 'Bearer sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })],
      [
        'a real key, one character off',
        () => ({ authorization: `Bearer ${a.key.slice(0, -1)}${a.key.endsWith('A') ? 'B' : 'A'}` }),
      ],
      ['the admin token with a character more', () => ({ authorization: `Bearer ${get().adminToken}x` })],
      ['a real key without "Bearer"', () => ({ authorization: a.key })],
      ['a real key as Basic credentials', () => ({ authorization: `Basic ${a.key}` })],
      ['an empty bearer', () => ({ authorization: 'Bearer ' })],
    ];
    for (const route of ROUTES) {
      it(route, async () => {
        const before = await snapshot(get());
        const [method, template] = route.split(' ') as [string, string];
        const path = template
          .replace('{keyId}', `key_${'0'.repeat(26)}`)
          .replace(
            '{id}',
            route.includes('tenants')
              ? a.tenantId
              : route.includes('events')
                ? a.evt
                : route.includes('deliveries')
                  ? a.dlv
                  : a.dst,
          );
        const anonymous = get().client(undefined);
        for (const [what, headers] of wrong) {
          const body = method === 'POST' || method === 'PATCH' ? { body: { name: 'x' } } : {};
          await rejectsWith(
            anonymous.request(method, path, { ...body, headers: headers() }),
            401,
            'unauthorized',
            `${route} with ${what}`,
          );
        }
        assert.deepEqual(await snapshot(get()), before, 'the store changed');
      });
    }
  });

  it('a tenant key on an admin route → 403 forbidden', async () => {
    const before = await snapshot(get());
    await rejectsWith(a.api.tenants.create({ name: 'sneaky' }), 403, 'forbidden', 'create tenant');
    await rejectsWith(a.api.tenants.list(), 403, 'forbidden', 'list tenants');
    await rejectsWith(a.api.tenants.get(a.tenantId), 403, 'forbidden', 'get own tenant');
    await rejectsWith(a.api.tenants.get(b.tenantId), 403, 'forbidden', 'get another tenant');
    await rejectsWith(a.api.tenants.createKey(a.tenantId), 403, 'forbidden', 'create a key');
    await rejectsWith(a.api.tenants.listKeys(a.tenantId), 403, 'forbidden', 'list keys');
    await rejectsWith(
      a.api.tenants.deleteKey(a.tenantId, `key_${'0'.repeat(26)}`),
      403,
      'forbidden',
      'delete a key',
    );
    await rejectsWith(a.api.tenants.delete(b.tenantId), 403, 'forbidden', 'delete another tenant');
    assert.deepEqual(await snapshot(get()), before, 'the store changed');
  });

  describe('the admin token', () => {
    it('sees every tenant without ?tenantId=, one tenant with it', async () => {
      const admin = get().admin;
      const all = (await collect(admin.destinations.listAll())).map((d) => d.id);
      assert.ok(all.includes(a.dst) && all.includes(b.dst));
      const onlyA = await collect(admin.forTenant(a.tenantId).destinations.listAll());
      assert.ok(onlyA.length > 0 && onlyA.every((d) => d.tenantId === a.tenantId));
      const dlvs = await collect(admin.deliveries.listAll({}, { tenantId: b.tenantId }));
      assert.ok(dlvs.length > 0 && dlvs.every((d) => d.destinationId === b.dst));
      await rejectsWith(admin.destinations.list({}, { tenantId: unknownLike(a.tenantId) }), 404, 'not_found');
    });

    it("acts on any tenant's resources by id", async () => {
      const admin = get().admin;
      assert.equal((await admin.destinations.get(b.dst)).tenantId, b.tenantId);
      assert.equal((await admin.events.get(b.evt)).id, b.evt);
      assert.equal((await admin.deliveries.get(b.dlv)).destinationId, b.dst);
      assert.equal((await admin.destinations.stats(b.dst)).state, 'paused');
      assert.equal((await admin.tenants.get(b.tenantId)).id, b.tenantId);
    });

    it('creates for a tenant with ?tenantId=, and must name one', async () => {
      const admin = get().admin;
      const input = {
        url: get().rcv.url('admin'),
        rateLimit: { limit: 1, period: 'second' },
        eventTypes: ['admin.*'],
      } satisfies CreateDestinationInput;
      const err = await rejectsWith(
        admin.destinations.create(input),
        400,
        'validation_failed',
        'no tenantId',
      );
      assert.deepEqual(
        err.issues.map((i) => i.path),
        ['query.tenantId'],
      );
      await rejectsWith(
        admin.events.send({ type: 'admin.x', payload: {} }),
        400,
        'validation_failed',
        'no tenantId',
      );
      const forA = admin.forTenant(a.tenantId);
      const dst = await forA.destinations.create(input);
      assert.equal(dst.tenantId, a.tenantId);
      await forA.destinations.pause(dst.id);
      const sent = await forA.events.send({ type: 'admin.x', payload: {} });
      assert.deepEqual(
        sent.deliveries.map((d) => d.destinationId).sort(),
        [a.dst, dst.id].sort(),
        "a's catch-all destination and the new one, none of b's",
      );
      assert.equal((await a.api.events.get(sent.id)).id, sent.id, "the event is the tenant's");
      await rejectsWith(b.api.events.get(sent.id), 404, 'not_found', "and not another's");
      const batch = await forA.events.sendBatch([{ type: 'admin.y', payload: 1 }]);
      assert.deepEqual(batch.data[0]!.deliveries.map((d) => d.destinationId).sort(), [a.dst, dst.id].sort());
      await rejectsWith(
        forA.events.send({ type: 'admin.x', payload: {}, destinationId: b.dst }),
        404,
        'not_found',
        "acting for a, b's destination",
      );
    });

    it("a tenant's key with its own ?tenantId= works as without", async () => {
      const mine = await a.api.destinations.list({}, { tenantId: a.tenantId });
      assert.deepEqual(mine, await a.api.destinations.list());
    });
  });
});

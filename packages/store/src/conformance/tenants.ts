/** Store conformance: a tenant's quotas (set by the operator) and its pending-events count. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { completion, newDestination, newEvent, newTenant, type OpenStore, T0, useStore } from './fixtures.ts';

export function tenantCases(open: OpenStore): void {
  describe('tenant quotas', () => {
    const ctx = useStore(open);

    it('a tenant has no quota of its own until the operator sets one; a patch changes what it names', async () => {
      assert.deepEqual((await ctx.store.getTenant(ctx.tenant.id))?.quota, {
        eventsPerSecond: null,
        pendingEvents: null,
      });
      const patched = await ctx.store.updateTenant(ctx.tenant.id, { quota: { eventsPerSecond: 50 } });
      assert.deepEqual(patched, { ...ctx.tenant, quota: { eventsPerSecond: 50, pendingEvents: null } });
      await ctx.store.updateTenant(ctx.tenant.id, { name: 'Renamed', quota: { pendingEvents: 1_000 } });
      const read = await ctx.store.getTenant(ctx.tenant.id);
      assert.deepEqual(read, {
        ...ctx.tenant,
        name: 'Renamed',
        quota: { eventsPerSecond: 50, pendingEvents: 1_000 },
      });
      assert.deepEqual((await ctx.store.keyByHash(`hash-${ctx.tenant.id}`))?.tenant, read);
      assert.deepEqual((await ctx.store.listTenants({ limit: 10 })).items, [read]);
      await ctx.store.updateTenant(ctx.tenant.id, { quota: { eventsPerSecond: null } });
      assert.deepEqual((await ctx.store.getTenant(ctx.tenant.id))?.quota, {
        eventsPerSecond: null,
        pendingEvents: 1_000,
      });
      assert.deepEqual(
        await ctx.store.updateTenant(ctx.tenant.id, {}),
        await ctx.store.getTenant(ctx.tenant.id),
      );
      assert.equal(await ctx.store.updateTenant('ten_missing', { quota: { eventsPerSecond: 1 } }), undefined);
    });

    it('a tenant created with quotas keeps them', async () => {
      const other = { ...newTenant(), quota: { eventsPerSecond: 7, pendingEvents: 70 } };
      await ctx.store.createTenant(other, `hash-${other.id}`);
      assert.deepEqual(await ctx.store.getTenant(other.id), other);
    });

    it('pendingEvents: events with a delivery not yet finished, once per event, up to the cap', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 0);
      // Three events fanned out to both destinations, two to one: five events, eight deliveries.
      await ctx.store.acceptEvents(
        ctx.tenant.id,
        [
          newEvent([a.id, b.id]),
          newEvent([a.id, b.id]),
          newEvent([a.id, b.id]),
          newEvent([a.id]),
          newEvent([a.id]),
        ],
        T0,
      );
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 5);
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 3), 3, 'counted up to the cap');
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 0), 0);

      // Queued and delivering count; an event counts until its last delivery finishes.
      const claimedA = await ctx.claim(a.id, 10, T0);
      assert.equal(claimedA.length, 5);
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 5);
      await ctx.store.completeAttempts(
        claimedA.map((d) => completion(d, { status: 'delivered', startedAt: T0 })),
        T0 + 10,
      );
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 3, 'the fanned-out ones wait on b');
      const claimedB = await ctx.claim(b.id, 10, T0 + 10);
      await ctx.store.completeAttempts(
        claimedB.map((d, i) => completion(d, { status: i === 0 ? 'dead' : 'delivered', startedAt: T0 + 10 })),
        T0 + 20,
      );
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 0, 'dead is finished too');
    });

    it('pendingEvents counts one tenant only; a deleted destination’s cancelled deliveries are finished', async () => {
      const a = await ctx.destination();
      const other = newTenant();
      await ctx.store.createTenant(other, `hash-${other.id}`);
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);
      await ctx.store.acceptEvents(other.id, [newEvent([theirs.id]), newEvent([theirs.id])], T0);
      await ctx.accept(a.id, 4, T0);
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 4);
      assert.equal(await ctx.store.pendingEvents(other.id, 100), 2);
      await ctx.store.deleteDestination(a.id, T0 + 1);
      assert.equal(await ctx.store.pendingEvents(ctx.tenant.id, 100), 0);
    });
  });
}

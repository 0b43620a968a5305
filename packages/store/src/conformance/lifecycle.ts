/** Store conformance: a tenant's keys, its deletion, and its event log (docs/api.md "Tenants' lifecycle"). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@sluice/core';
import { firstKeyId } from '../tenant-keys.ts';
import { newDestination, newEvent, newTenant, type OpenStore, T0, useStore } from './fixtures.ts';

export function lifecycleCases(open: OpenStore): void {
  describe('tenant keys', () => {
    const ctx = useStore(open);

    it('the first key is listed; keys are added, found by hash, listed oldest first, deleted', async () => {
      const [first] = await ctx.store.listTenantKeys(ctx.tenant.id);
      assert.deepEqual(first, {
        id: firstKeyId(ctx.tenant.id),
        tenantId: ctx.tenant.id,
        prefix: null,
        createdAt: ctx.tenant.createdAt,
        lastUsedAt: null,
      });
      const id = newId('key');
      const added = await ctx.store.addTenantKey(
        ctx.tenant.id,
        { id, hash: 'hash-2', prefix: 'sk_abcdefgh' },
        T0 + 5,
      );
      assert.deepEqual(added, {
        id,
        tenantId: ctx.tenant.id,
        prefix: 'sk_abcdefgh',
        createdAt: T0 + 5,
        lastUsedAt: null,
      });
      assert.deepEqual(await ctx.store.keyByHash('hash-2'), {
        tenant: ctx.tenant,
        keyId: id,
        lastUsedAt: null,
      });
      assert.deepEqual(
        (await ctx.store.listTenantKeys(ctx.tenant.id)).map((k) => k.id),
        [firstKeyId(ctx.tenant.id), id],
      );

      await ctx.store.touchTenantKey(id, T0 + 60_000);
      assert.equal((await ctx.store.keyByHash('hash-2'))?.lastUsedAt, T0 + 60_000);

      assert.equal(await ctx.store.deleteTenantKey(ctx.tenant.id, firstKeyId(ctx.tenant.id)), 'deleted');
      assert.equal(await ctx.store.keyByHash(`hash-${ctx.tenant.id}`), undefined, 'refused at once');
      assert.equal(await ctx.store.deleteTenantKey(ctx.tenant.id, id), 'last', 'a tenant keeps one key');
      assert.equal((await ctx.store.keyByHash('hash-2'))?.keyId, id);
      assert.equal(await ctx.store.deleteTenantKey(ctx.tenant.id, firstKeyId(ctx.tenant.id)), 'not_found');
    });

    it("another tenant's key, or a missing tenant, is not found", async () => {
      const other = newTenant();
      await ctx.store.createTenant(other, `hash-${other.id}`, { id: newId('key'), prefix: 'sk_12345678' });
      const [theirs] = await ctx.store.listTenantKeys(other.id);
      assert.equal(theirs?.prefix, 'sk_12345678');
      assert.equal(await ctx.store.deleteTenantKey(ctx.tenant.id, theirs?.id ?? ''), 'not_found');
      assert.equal(
        await ctx.store.addTenantKey('ten_missing', { id: newId('key'), hash: 'h', prefix: null }, T0),
        undefined,
      );
      assert.deepEqual(await ctx.store.listTenantKeys('ten_missing'), []);
    });
  });

  describe('tenant deletion', () => {
    const ctx = useStore(open);

    it('deletes its keys and destinations, cancels their undelivered deliveries, and hides the tenant', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const [pending] = await ctx.accept(a.id, 1, T0);
      const other = newTenant();
      await ctx.store.createTenant(other, `hash-${other.id}`);
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);

      assert.deepEqual(await ctx.store.deleteTenant(ctx.tenant.id, T0 + 10), [a.id, b.id].sort());
      assert.equal(await ctx.store.keyByHash(`hash-${ctx.tenant.id}`), undefined);
      assert.deepEqual(await ctx.store.listTenantKeys(ctx.tenant.id), []);
      assert.equal(await ctx.store.getTenant(ctx.tenant.id), undefined);
      assert.equal(await ctx.store.updateTenant(ctx.tenant.id, { name: 'x' }), undefined);
      assert.deepEqual(
        (await ctx.store.listTenants({ limit: 10 })).items.map((t) => t.id),
        [other.id],
      );
      assert.equal(await ctx.store.getDestination(a.id), undefined);
      assert.deepEqual(await ctx.store.listDestinations(ctx.tenant.id), []);
      assert.equal(await ctx.statusOf(pending ?? ''), 'cancelled');
      assert.equal(
        await ctx.store.addTenantKey(ctx.tenant.id, { id: newId('key'), hash: 'h', prefix: null }, T0),
        undefined,
      );
      assert.equal(await ctx.store.deleteTenant(ctx.tenant.id, T0 + 20), undefined, 'once');
      assert.equal((await ctx.store.getDestination(theirs.id))?.id, theirs.id, 'others untouched');
      assert.equal((await ctx.store.keyByHash(`hash-${other.id}`))?.tenant.id, other.id);
    });
  });

  describe('event log', () => {
    const ctx = useStore(open);

    it("lists the tenant's events newest first, by type, prefix, destination and time, in pages", async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const accept = async (type: string, ids: string[], now: number) =>
        (await ctx.store.acceptEvents(ctx.tenant.id, [newEvent(ids, { type })], now))[0]?.event.id ?? '';
      const e1 = await accept('order.created', [a.id], T0);
      const e2 = await accept('order.paid', [b.id], T0 + 10);
      const e3 = await accept('invoice.sent', [a.id, b.id], T0 + 20);
      const e4 = await accept('order_x.created', [a.id], T0 + 30);
      const other = newTenant();
      await ctx.store.createTenant(other, `hash-${other.id}`);
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);
      await ctx.store.acceptEvents(other.id, [newEvent([theirs.id])], T0 + 5);

      const ids = async (filter: Omit<Parameters<typeof ctx.store.listEvents>[0], 'tenantId'>, limit = 10) =>
        (await ctx.store.listEvents({ tenantId: ctx.tenant.id, ...filter }, { limit })).items.map(
          (e) => e.id,
        );
      assert.deepEqual(await ids({}), [e4, e3, e2, e1]);
      assert.deepEqual(await ids({ type: 'order.paid' }), [e2]);
      assert.deepEqual(await ids({ type: 'order.*' }), [e2, e1], 'a prefix ends at its dot');
      assert.deepEqual(await ids({ destinationId: b.id }), [e3, e2]);
      assert.deepEqual(await ids({ since: T0 + 10, until: T0 + 20 }), [e3, e2]);
      assert.deepEqual(await ids({ destinationId: theirs.id }), [], "another tenant's destination");

      const first = await ctx.store.listEvents({ tenantId: ctx.tenant.id }, { limit: 3 });
      assert.deepEqual(
        first.items.map((e) => e.id),
        [e4, e3, e2],
      );
      assert.equal(first.next, e2);
      const second = await ctx.store.listEvents(
        { tenantId: ctx.tenant.id },
        { limit: 3, after: first.next ?? '' },
      );
      const { payload, ...rest } = (await ctx.store.getEvent(e1))?.event ?? assert.fail('e1');
      assert.deepEqual(second, { items: [{ ...rest, payloadBytes: payload.length }], next: null });
    });

    it("each event without its payload, with the payload's size in UTF-8 bytes", async () => {
      const to = await ctx.destination();
      const payloads = ['{"order":1}', JSON.stringify({ note: 'é€😀'.repeat(1_000) }), 'x'.repeat(300_000)];
      for (const [i, payload] of payloads.entries()) {
        await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([to.id], { payload })], T0 + i);
      }
      const page = await ctx.store.listEvents({ tenantId: ctx.tenant.id }, { limit: 10 });
      assert.deepEqual(
        page.items.map((e) => e.payloadBytes),
        payloads.map((p) => Buffer.byteLength(p)).reverse(),
      );
      for (const e of page.items) assert.ok(!('payload' in e), 'no payload in a page');
    });
  });
}

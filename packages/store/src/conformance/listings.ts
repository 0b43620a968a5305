/** Store conformance: the listings, newest first, page by page. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@sluice/core';
import type { AcceptResult, DeliveryFilter, Page, PageRequest } from '../index.ts';
import { newDestination, newEvent, newTenant, type OpenStore, T0, useStore } from './fixtures.ts';

export function listingCases(open: OpenStore): void {
  describe('listings', () => {
    const ctx = useStore(open);

    /** Every page of a listing, checking each page's size and cursor. */
    const walk = async <T extends { id: string }>(
      limit: number,
      fetch: (page: PageRequest) => Promise<Page<T>>,
    ): Promise<string[]> => {
      const ids: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await fetch(after === undefined ? { limit } : { limit, after });
        assert.ok(page.items.length <= limit, 'a page holds at most limit items');
        ids.push(...page.items.map((item) => item.id));
        if (page.next === null) return ids;
        assert.equal(page.next, page.items.at(-1)?.id, 'next is the last id of the page');
        after = page.next;
      }
      return assert.fail('the listing never ended');
    };

    it('listTenants: newest first, by pages', async () => {
      const more = [newTenant(T0 + 1), newTenant(T0 + 2), newTenant(T0 + 3), newTenant(T0 + 4)];
      for (const t of more) await ctx.store.createTenant(t, `hash-${t.id}`);
      const newestFirst = [...more.map((t) => t.id).reverse(), ctx.tenant.id];
      assert.deepEqual(await walk(2, (p) => ctx.store.listTenants(p)), newestFirst);
      assert.deepEqual(await walk(5, (p) => ctx.store.listTenants(p)), newestFirst);
      assert.deepEqual(await walk(100, (p) => ctx.store.listTenants(p)), newestFirst);
      const first = await ctx.store.listTenants({ limit: 1 });
      assert.deepEqual(first.items, [more[3]]);
      const fifth = await ctx.store.listTenants({ limit: 5, after: more[0]?.id });
      assert.deepEqual(fifth, { items: [ctx.tenant], next: null });
    });

    it('pageDestinations: newest first, deleted left out, one tenant or all', async () => {
      const a1 = await ctx.destination();
      const gone = await ctx.destination();
      const a2 = await ctx.destination();
      const other = newTenant();
      await ctx.store.createTenant(other, 'hash-other');
      const b1 = await ctx.store.createDestination(newDestination(other.id), T0);
      const a3 = await ctx.destination();
      await ctx.store.deleteDestination(gone.id, T0 + 1);
      assert.deepEqual(await walk(2, (p) => ctx.store.pageDestinations(ctx.tenant.id, p)), [
        a3.id,
        a2.id,
        a1.id,
      ]);
      assert.deepEqual(await walk(1, (p) => ctx.store.pageDestinations(undefined, p)), [
        a3.id,
        b1.id,
        a2.id,
        a1.id,
      ]);
      assert.deepEqual((await ctx.store.pageDestinations(other.id, { limit: 10 })).items, [b1]);
    });

    it('getEvent: the event as accepted and its deliveries', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const [result] = await ctx.store.acceptEvents(
        ctx.tenant.id,
        [newEvent([b.id, a.id], { type: 'invoice.paid', payload: '{"x": 1}', idempotencyKey: 'inv-1' })],
        T0 + 9,
      );
      const found = await ctx.store.getEvent(result?.event.id as string);
      assert.deepEqual(found?.event, {
        id: result?.event.id,
        tenantId: ctx.tenant.id,
        type: 'invoice.paid',
        payload: '{"x": 1}',
        idempotencyKey: 'inv-1',
        createdAt: T0 + 9,
      });
      assert.deepEqual(
        found?.deliveries.map((d) => [d.id, d.destinationId, d.status]),
        result?.event.deliveries.map((d) => [d.id, d.destinationId, 'pending']),
      );
      assert.equal(await ctx.store.getEvent(newId('evt')), undefined);
    });

    it('listDeliveries: filtered by tenant, destination, event and status, newest first', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const other = newTenant();
      await ctx.store.createTenant(other, 'hash-other');
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);
      const [first] = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id])], T0);
      const [second] = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([a.id, b.id])], T0 + 1);
      const [their] = await ctx.store.acceptEvents(other.id, [newEvent([theirs.id])], T0 + 2);
      const [claimed] = await ctx.claim(a.id, 1, T0 + 5);
      const ids = (r: AcceptResult | undefined) => r?.event.deliveries.map((d) => d.id) ?? [];
      const [a1] = ids(first);
      const [a2, b2] = ids(second);
      assert.equal(claimed?.id, a1);

      const list = (filter: DeliveryFilter) => walk(1, (p) => ctx.store.listDeliveries(filter, p));
      assert.deepEqual(await list({ tenantId: ctx.tenant.id }), [b2, a2, a1]);
      assert.deepEqual(await list({}), [...ids(their), b2, a2, a1]);
      assert.deepEqual(await list({ destinationId: a.id }), [a2, a1]);
      assert.deepEqual(await list({ eventId: second?.event.id }), [b2, a2]);
      assert.deepEqual(await list({ tenantId: ctx.tenant.id, status: 'queued' }), [a1]);
      assert.deepEqual(await list({ destinationId: a.id, status: 'pending' }), [a2]);
      assert.deepEqual(await list({ tenantId: other.id, destinationId: a.id }), []);
      // Last changed at or after a time: a1 was claimed at T0 + 5.
      assert.deepEqual(await list({ tenantId: ctx.tenant.id, changedSince: T0 + 1 }), [b2, a2, a1]);
      assert.deepEqual(await list({ tenantId: ctx.tenant.id, changedSince: T0 + 2 }), [a1]);
      assert.deepEqual(await list({ changedSince: T0 + 6 }), []);
      const page = await ctx.store.listDeliveries({ destinationId: b.id }, { limit: 10 });
      assert.deepEqual(page, { items: [(await ctx.store.getDelivery(b2 as string))?.delivery], next: null });
    });
  });
}

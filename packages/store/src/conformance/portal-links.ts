/** Store conformance: portal links (docs/api.md "Portal links") and the listings a narrowed link reads. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@sluice/core';
import type { NewPortalLink } from '../portal-links.ts';
import { newDestination, newEvent, newTenant, type OpenStore, T0, useStore } from './fixtures.ts';

const DAY = 24 * 3_600_000;

function newLink(tenantId: string, overrides: Partial<NewPortalLink> = {}): NewPortalLink {
  return {
    id: newId('prt'),
    tenantId,
    tokenHash: `hash-${newId('prt')}`,
    access: 'manage',
    destinationIds: null,
    branding: null,
    createdAt: T0,
    expiresAt: T0 + 900_000,
    ...overrides,
  };
}

export function portalLinkCases(open: OpenStore): void {
  describe('portal links', () => {
    const ctx = useStore(open);

    it('created, found by hash with its tenant, got, listed newest first in pages, deleted', async () => {
      const a = newLink(ctx.tenant.id, {
        access: 'read',
        destinationIds: ['dst_a', 'dst_b'],
        branding: { title: 'Acme', accentColor: '#0a7cff', logoUrl: 'data:image/png;base64,AA==' },
      });
      const { tokenHash: _h, ...record } = a;
      assert.deepEqual(await ctx.store.createPortalLink(a), record);
      const b = newLink(ctx.tenant.id, { createdAt: T0 + 1 });
      await ctx.store.createPortalLink(b);
      const other = newTenant();
      await ctx.store.createTenant(other, `hash-${other.id}`);
      const theirs = newLink(other.id);
      await ctx.store.createPortalLink(theirs);

      assert.deepEqual(await ctx.store.portalLinkByHash(a.tokenHash), { link: record, tenant: ctx.tenant });
      assert.equal(await ctx.store.portalLinkByHash('hash-nope'), undefined);
      assert.deepEqual(await ctx.store.getPortalLink(a.id), record);
      assert.equal(await ctx.store.getPortalLink('prt_nope'), undefined);

      const first = await ctx.store.listPortalLinks(ctx.tenant.id, { limit: 1 });
      assert.deepEqual(
        first.items.map((l) => l.id),
        [b.id],
      );
      assert.equal(first.next, b.id);
      const second = await ctx.store.listPortalLinks(ctx.tenant.id, { limit: 1, after: b.id });
      assert.deepEqual(second, { items: [record], next: null });
      assert.deepEqual(
        (await ctx.store.listPortalLinks(undefined, { limit: 10 })).items.map((l) => l.id),
        [theirs.id, b.id, a.id],
        "every tenant's",
      );

      assert.equal(await ctx.store.deletePortalLink(a.id), true);
      assert.equal(await ctx.store.portalLinkByHash(a.tokenHash), undefined, 'refused at once');
      assert.equal(await ctx.store.deletePortalLink(a.id), false);
      assert.equal((await ctx.store.portalLinkByHash(theirs.tokenHash))?.tenant.id, other.id);
    });

    it('a missing tenant gets none; a link expired over a day is pruned when its tenant makes another', async () => {
      assert.equal(await ctx.store.createPortalLink(newLink('ten_missing')), undefined);
      const old = newLink(ctx.tenant.id, { createdAt: T0 - 3 * DAY, expiresAt: T0 - 2 * DAY });
      const recent = newLink(ctx.tenant.id, { createdAt: T0 - DAY, expiresAt: T0 - 1_000 });
      await ctx.store.createPortalLink(old);
      await ctx.store.createPortalLink(recent);
      assert.equal((await ctx.store.portalLinkByHash(old.tokenHash))?.link.expiresAt, old.expiresAt);
      await ctx.store.createPortalLink(newLink(ctx.tenant.id));
      assert.equal(await ctx.store.getPortalLink(old.id), undefined, 'pruned');
      assert.equal((await ctx.store.getPortalLink(recent.id))?.id, recent.id, 'expired, still listed');
    });

    it("a tenant's deletion deletes its links", async () => {
      const link = newLink(ctx.tenant.id);
      await ctx.store.createPortalLink(link);
      await ctx.store.deleteTenant(ctx.tenant.id, T0 + 10);
      assert.equal(await ctx.store.portalLinkByHash(link.tokenHash), undefined);
      assert.equal(await ctx.store.getPortalLink(link.id), undefined);
    });
  });

  describe('listings narrowed to some destinations', () => {
    const ctx = useStore(open);

    it('deliveries and events with a delivery to one of the destinations', async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const c = await ctx.destination();
      const accept = async (ids: string[], now: number) =>
        (await ctx.store.acceptEvents(ctx.tenant.id, [newEvent(ids)], now))[0]?.event;
      const e1 = await accept([a.id], T0);
      const e2 = await accept([b.id, c.id], T0 + 1);
      const e3 = await accept([c.id], T0 + 2);
      const other = newTenant();
      await ctx.store.createTenant(other, `hash-${other.id}`);
      await ctx.store.createDestination(newDestination(other.id), T0);

      const events = await ctx.store.listEvents(
        { tenantId: ctx.tenant.id, destinationIds: [a.id, b.id] },
        { limit: 10 },
      );
      assert.deepEqual(
        events.items.map((e) => e.id),
        [e2?.id, e1?.id],
      );
      assert.deepEqual(
        (
          await ctx.store.listEvents({ tenantId: ctx.tenant.id, destinationIds: [c.id] }, { limit: 1 })
        ).items.map((e) => e.id),
        [e3?.id],
      );
      const deliveries = await ctx.store.listDeliveries(
        { tenantId: ctx.tenant.id, destinationIds: [a.id, b.id] },
        { limit: 10 },
      );
      assert.deepEqual(deliveries.items.map((d) => d.destinationId).sort(), [a.id, b.id].sort());
      assert.deepEqual(
        (
          await ctx.store.listDeliveries(
            { tenantId: ctx.tenant.id, destinationIds: [a.id, b.id], destinationId: c.id },
            { limit: 10 },
          )
        ).items,
        [],
        'both filters hold',
      );
    });
  });
}

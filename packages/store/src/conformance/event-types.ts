/** Store conformance: the event-type catalog (create, read, change, delete, pages by name). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type OpenStore, T0, useStore } from './fixtures.ts';

const SCHEMA = {
  type: 'object',
  required: ['amount'],
  properties: { amount: { type: 'integer' }, currency: { type: 'string' } },
};

export function eventTypeCases(open: OpenStore): void {
  describe('event-type catalog', () => {
    const ctx = useStore(open);

    it('a type is created once, read back as sent, changed whole, and deleted', async () => {
      const fields = {
        description: 'An order was paid.',
        schema: SCHEMA,
        example: { amount: 5, currency: 'EUR' },
      };
      const created = await ctx.store.createEventType('order.paid', fields, T0);
      const expected = { name: 'order.paid', ...fields, createdAt: T0, updatedAt: T0 };
      assert.deepEqual(created, expected);
      assert.deepEqual(await ctx.store.getEventType('order.paid'), expected);
      // The schema's keys keep their order (JSON text as sent).
      assert.deepEqual(Object.keys((await ctx.store.getEventType('order.paid'))?.schema ?? {}), [
        'type',
        'required',
        'properties',
      ]);
      assert.equal(
        await ctx.store.createEventType('order.paid', { description: 'again', schema: null }, T0 + 1),
        undefined,
        'a name taken creates nothing',
      );
      assert.equal((await ctx.store.getEventType('order.paid'))?.description, 'An order was paid.');

      const changed = await ctx.store.updateEventType(
        'order.paid',
        { description: 'Paid.', schema: null },
        T0 + 5,
      );
      assert.deepEqual(changed, {
        name: 'order.paid',
        description: 'Paid.',
        schema: null,
        createdAt: T0,
        updatedAt: T0 + 5,
      });
      assert.deepEqual(await ctx.store.getEventType('order.paid'), changed);
      assert.equal(
        await ctx.store.updateEventType('order.missing', { description: 'x', schema: null }, T0),
        undefined,
      );

      assert.equal(await ctx.store.deleteEventType('order.paid'), true);
      assert.equal(await ctx.store.deleteEventType('order.paid'), false);
      assert.equal(await ctx.store.getEventType('order.paid'), undefined);
    });

    it('an example may be any JSON value, null and false included', async () => {
      await ctx.store.createEventType('a.null', { description: 'd', schema: null, example: null }, T0);
      await ctx.store.createEventType(
        'a.false',
        { description: 'd', schema: { type: 'boolean' }, example: false },
        T0,
      );
      await ctx.store.createEventType('a.none', { description: 'd', schema: null }, T0);
      assert.equal((await ctx.store.getEventType('a.null'))?.example, null);
      assert.equal((await ctx.store.getEventType('a.false'))?.example, false);
      assert.equal('example' in ((await ctx.store.getEventType('a.none')) ?? {}), false);
    });

    it('the catalog pages by name, ascending, bytewise', async () => {
      const names = ['user.created', 'order.paid', 'Order.Refunded', 'order.item-added', 'order_x', 'b'];
      for (const name of names)
        await ctx.store.createEventType(name, { description: name, schema: null }, T0);
      const sorted = [...names].sort();
      const seen: string[] = [];
      let after: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await ctx.store.listEventTypes({ limit: 4, after });
        seen.push(...page.items.map((t) => t.name));
        if (page.next === null) break;
        assert.equal(page.next, page.items[page.items.length - 1]?.name);
        after = page.next;
      }
      assert.deepEqual(seen, sorted);
      const all = await ctx.store.listEventTypes({ limit: 6 });
      assert.deepEqual(
        all.items.map((t) => t.name),
        sorted,
      );
      assert.equal(all.next, null, 'exactly a page: no next');
    });
  });
}

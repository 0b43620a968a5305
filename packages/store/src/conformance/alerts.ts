/**
 * The Store conformance cases of backlog alerts (ADR 0009), run by `storeConformance` for
 * every store: the backlog read, and the alert state that must be raised and resolved exactly
 * once however many callers race.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type FiringAlert, newId } from '@sluice/core';
import type { AlertNotice, NewDestination, NewTenant } from '../index.ts';
import { newDestination, newEvent, type OpenStore, T0, useStore } from './fixtures.ts';

/** A destination of the tenant with no name, as the alert cases make them. */
const destinationOf = (tenantId: string, id = newId('dst')): NewDestination =>
  newDestination(tenantId, { id, name: null, url: 'https://hooks.example.com/x' });

export function alertConformance(open: OpenStore): void {
  describe('backlog alerts', () => {
    const ctx = useStore(open);
    const system: NewTenant = { id: 'ten_00000000000000000000000000', name: 'sluice', createdAt: T0 };
    const systemDestination = destinationOf(system.id, 'dst_00000000000000000000000000');

    const destination = async () => (await ctx.store.createDestination(destinationOf(ctx.tenant.id), T0)).id;
    const accept = (tenantId: string, destinationId: string, count: number, now: number) =>
      ctx.store.acceptEvents(
        tenantId,
        Array.from({ length: count }, (_, i) => newEvent([destinationId], { payload: `{"n":${i}}` })),
        now,
      );
    const alert = (destinationId: string, overrides: Partial<FiringAlert> = {}): FiringAlert => ({
      destinationId,
      tenantId: ctx.tenant.id,
      kind: 'pending_count',
      threshold: 5,
      value: 9,
      raisedAt: T0 + 1_000,
      ...overrides,
    });
    const notice = (n: number): AlertNotice => ({
      tenantId: system.id,
      event: {
        type: 'sluice.backlog.raised',
        payload: `{"n":${n}}`,
        idempotencyKey: null,
        destinationIds: [systemDestination.id],
      },
    });
    const systemDeliveries = async () =>
      (await ctx.store.listDeliveries({ tenantId: system.id }, { limit: 100 })).items.length;

    it('backlogSamples: pending counted up to the cap, earliest due, any state; deleted and one tenant left out', async () => {
      const busy = await destination();
      const paused = await destination();
      const idle = await destination();
      const gone = await destination();
      await accept(ctx.tenant.id, busy, 4, T0 + 10);
      await accept(ctx.tenant.id, busy, 3, T0 + 20);
      await accept(ctx.tenant.id, paused, 1, T0 + 30);
      await accept(ctx.tenant.id, gone, 1, T0);
      await ctx.store.updateDestination(paused, { state: 'paused' }, T0);
      await ctx.store.deleteDestination(gone, T0);
      await ctx.store.ensureSystemDestination(system, systemDestination, T0);
      await accept(system.id, systemDestination.id, 2, T0);

      const samples = (await ctx.store.backlogSamples(5, system.id)).sort((a, b) =>
        a.destinationId.localeCompare(b.destinationId),
      );
      const expected = [
        { destinationId: busy, tenantId: ctx.tenant.id, pending: 5, oldestDueAt: T0 + 10 },
        { destinationId: paused, tenantId: ctx.tenant.id, pending: 1, oldestDueAt: T0 + 30 },
      ].sort((a, b) => a.destinationId.localeCompare(b.destinationId));
      assert.deepEqual(samples, expected);
      assert.ok(!samples.some((s) => s.destinationId === idle));
      const uncapped = await ctx.store.backlogSamples(1_000, system.id);
      assert.equal(uncapped.find((s) => s.destinationId === busy)?.pending, 7);
    });

    it('raiseAlert raises once: a firing alert is not raised again, and listAlerts shows it', async () => {
      const a = await destination();
      assert.equal(await ctx.store.raiseAlert(alert(a), null, T0), true);
      assert.equal(
        await ctx.store.raiseAlert(alert(a, { value: 50, raisedAt: T0 + 9_000 }), null, T0),
        false,
      );
      assert.equal(
        await ctx.store.raiseAlert(alert(a, { kind: 'pending_age', threshold: 60 }), null, T0),
        true,
      );
      const other: NewTenant = { id: newId('ten'), name: 'Other', createdAt: T0 };
      await ctx.store.createTenant(other, `hash-${other.id}`);
      const b = (await ctx.store.createDestination(destinationOf(other.id), T0)).id;
      await ctx.store.raiseAlert(alert(b, { tenantId: other.id }), null, T0);

      assert.deepEqual(await ctx.store.listAlerts(ctx.tenant.id), [
        alert(a, { kind: 'pending_age', threshold: 60 }),
        alert(a),
      ]);
      assert.equal((await ctx.store.listAlerts()).length, 3);
      assert.deepEqual(await ctx.store.listAlerts(other.id), [alert(b, { tenantId: other.id })]);
    });

    it('of many concurrent raises exactly one wins, and only its event is accepted', async () => {
      await ctx.store.ensureSystemDestination(system, systemDestination, T0);
      const a = await destination();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => ctx.store.raiseAlert(alert(a, { value: 10 + i }), notice(i), T0)),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await systemDeliveries(), 1);
      assert.equal((await ctx.store.listAlerts()).length, 1);
    });

    it('resolveAlert resolves the alert raised at that time, once; its event goes with it', async () => {
      await ctx.store.ensureSystemDestination(system, systemDestination, T0);
      const a = await destination();
      await ctx.store.raiseAlert(alert(a), notice(0), T0);
      assert.equal(await ctx.store.resolveAlert(alert(a, { raisedAt: T0 + 5 }), notice(1), T0), false);
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) => ctx.store.resolveAlert(alert(a), notice(2 + i), T0 + 2_000)),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.deepEqual(await ctx.store.listAlerts(), []);
      assert.equal(await systemDeliveries(), 2);
      // Resolved: it may be raised again.
      assert.equal(await ctx.store.raiseAlert(alert(a, { raisedAt: T0 + 3_000 }), null, T0), true);
    });

    it('ensureSystemDestination creates, updates, and brings back a deleted destination', async () => {
      // Replicas starting together all ensure it: none fails.
      const [created] = await Promise.all(
        Array.from({ length: 3 }, () => ctx.store.ensureSystemDestination(system, systemDestination, T0)),
      );
      assert.ok(created);
      assert.equal(created.state, 'active');
      assert.equal((await ctx.store.getTenant(system.id))?.name, 'sluice');
      const changed = { ...systemDestination, url: 'https://alerts.example.com/b' };
      await ctx.store.ensureSystemDestination(system, changed, T0 + 1);
      assert.equal(
        (await ctx.store.getDestination(systemDestination.id))?.url,
        'https://alerts.example.com/b',
      );
      await ctx.store.updateDestination(
        systemDestination.id,
        { state: 'disabled', disabledReason: 'gone' },
        T0 + 2,
      );
      await ctx.store.deleteDestination(systemDestination.id, T0 + 3);
      const back = await ctx.store.ensureSystemDestination(system, systemDestination, T0 + 4);
      assert.equal(back.state, 'active');
      assert.equal(back.disabledReason, null);
      assert.equal(back.createdAt, T0);
      assert.equal((await ctx.store.getDestination(systemDestination.id))?.url, systemDestination.url);
    });
  });
}

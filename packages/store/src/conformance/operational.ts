/**
 * Operational events (operational.ts): a completion batch accepts its notices in its own
 * transaction — to the tenant's destinations that name the type or `sluice.*`, never to `*`
 * ones nor to the destination the event is about —, a dead `sluice.…` delivery tells
 * nothing, a 410 is told once, and `emitOperational` creates one event per key.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery, CompletedAttempt, OperationalNotice } from '../index.ts';
import { completion, type OpenStore, T0, useStore } from './fixtures.ts';

interface Body {
  type: string;
  tenantId: string;
  destinationId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

export function operationalCases(open: OpenStore): void {
  describe('operational events', () => {
    const c = useStore(open);

    /** A tenant with a sluice.* subscriber, a * destination and a source of events. */
    const setUp = async () => {
      const ops = await c.destination({ eventTypes: ['sluice.*'] });
      const star = await c.destination({ eventTypes: ['*'] });
      const source = await c.destination({ eventTypes: ['order.*', 'sluice.*'] });
      return { ops, star, source };
    };

    /** Accepts one event of `type` for `destinationId`, claims it and completes it dead. */
    const dies = async (destinationId: string, type: string, extra: Partial<CompletedAttempt> = {}) => {
      const [accepted] = await c.store.acceptEvents(
        c.tenant.id,
        [{ type, payload: '{}', idempotencyKey: null, destinationIds: [destinationId] }],
        T0,
      );
      const [claimed] = (await c.store.claimDue(destinationId, 1, T0 + 1)).deliveries as [ClaimedDelivery];
      const done: CompletedAttempt = {
        ...completion(claimed, { status: 'dead', startedAt: T0 + 2, statusCode: 400 }),
        event: { id: accepted?.event.id ?? '', type, tenantId: c.tenant.id },
        ...extra,
      };
      return { changes: await c.store.completeAttempts([done], T0 + 10), claimed };
    };

    /** The events of `type` in the event log, each read whole (the log has no payloads). */
    const logged = async (type: string) => {
      const page = await c.store.listEvents({ tenantId: c.tenant.id, type }, { limit: 100 });
      const events = await Promise.all(page.items.map((e) => c.store.getEvent(e.id)));
      return events.map((e) => {
        assert.ok(e);
        return e.event;
      });
    };

    it('a dead delivery is told to the subscribers in its batch, to none of * and never to itself', async () => {
      const { ops, star, source } = await setUp();
      const { changes, claimed } = await dies(source.id, 'order.paid');
      assert.deepEqual(changes.notified, [ops.id]);
      const [event, ...more] = await logged('sluice.delivery.dead');
      assert.ok(event);
      assert.deepEqual(more, []);
      const body = JSON.parse(event.payload) as Body;
      assert.deepEqual(body, {
        type: 'sluice.delivery.dead',
        tenantId: c.tenant.id,
        destinationId: source.id,
        occurredAt: new Date(T0 + 10).toISOString(),
        data: {
          deliveryId: claimed.id,
          eventId: claimed.eventId,
          eventType: 'order.paid',
          attempts: 1,
          lastStatusCode: 400,
          lastError: 'HTTP 400',
        },
      });
      const found = await c.store.getEvent(event.id);
      assert.deepEqual(
        found?.deliveries.map((d) => d.destinationId),
        [ops.id],
        `not ${star.id} (*), not ${source.id} (itself)`,
      );
    });

    it('a dead delivery of a sluice.… event tells nothing (no loops)', async () => {
      const { ops } = await setUp();
      const { changes } = await dies(ops.id, 'sluice.delivery.dead');
      assert.equal(changes.notified, undefined);
      // Only the event that died: none about its death.
      assert.equal((await logged('sluice.delivery.dead')).length, 1);
    });

    it('a 410 tells disabled once, whatever the batch', async () => {
      const { ops, source } = await setUp();
      const gone = { status: 'dead' as const, startedAt: T0 + 2, statusCode: 410, disableDestination: true };
      const [a, b] = await Promise.all(
        [0, 1].map(() =>
          c.store.acceptEvents(
            c.tenant.id,
            [{ type: 'order.paid', payload: '{}', idempotencyKey: null, destinationIds: [source.id] }],
            T0,
          ),
        ),
      );
      assert.ok(a && b);
      const claimed = (await c.store.claimDue(source.id, 2, T0 + 1)).deliveries;
      assert.equal(claimed.length, 2);
      for (const [i, d] of claimed.entries())
        await c.store.completeAttempts([completion(d, gone)], T0 + 10 + i);
      const told = await logged('sluice.destination.disabled');
      assert.equal(told.length, 1);
      assert.deepEqual(JSON.parse(told[0]?.payload ?? '{}').data, {
        reason: 'the destination answered 410 Gone',
        statusCode: 410,
      });
      assert.deepEqual(
        (await c.store.getEvent(told[0]?.id ?? ''))?.deliveries.map((d) => d.destinationId),
        [ops.id],
      );
    });

    it('an update with a notice accepts it in its transaction; a reset of a suspended one tells recovered', async () => {
      const { ops, source } = await setUp();
      const notice: OperationalNotice = {
        tenantId: c.tenant.id,
        destinationId: source.id,
        type: 'sluice.secret.rotated',
        occurredAt: T0,
        data: { previousSecretExpiresAt: new Date(T0 + 86_400_000).toISOString() },
        key: `rotated:${source.id}:${T0}`,
      };
      await c.store.updateDestination(source.id, { name: 'renamed' }, T0, [notice]);
      assert.equal((await logged('sluice.secret.rotated')).length, 1);
      // Suspended by failures (the default policy suspends after 10 in a row), then reset.
      await c.store.acceptEvents(
        c.tenant.id,
        Array.from({ length: 12 }, () => ({
          type: 'order.paid',
          payload: '{}',
          idempotencyKey: null,
          destinationIds: [source.id],
        })),
        T0,
      );
      const claimed = (await c.store.claimDue(source.id, 12, T0 + 1)).deliveries;
      await c.store.completeAttempts(
        claimed.map((d) =>
          completion(d, { status: 'pending', startedAt: T0 + 2, nextAttemptAt: T0 + 60_000 }),
        ),
        T0 + 10,
      );
      assert.equal((await c.store.getDestination(source.id))?.health.state, 'suspended');
      assert.equal((await logged('sluice.destination.suspended')).length, 1);
      assert.equal((await c.store.resetHealth(source.id, T0 + 5_010))?.from, 'suspended');
      const [recovered] = await logged('sluice.destination.recovered');
      assert.deepEqual(JSON.parse(recovered?.payload ?? '{}').data, { suspendedForMs: 5_000 });
      assert.deepEqual(
        (await c.store.getEvent(recovered?.id ?? ''))?.deliveries.map((d) => d.destinationId),
        [ops.id],
      );
    });

    it('emitOperational accepts each key once, and tells which destinations got work', async () => {
      const { ops, source } = await setUp();
      const notice: OperationalNotice = {
        tenantId: c.tenant.id,
        destinationId: source.id,
        type: 'sluice.secret.rotated',
        occurredAt: T0,
        data: { previousSecretExpiresAt: new Date(T0 + 86_400_000).toISOString() },
        key: `rotated:${source.id}:${T0}`,
      };
      assert.deepEqual(await c.store.emitOperational([notice], T0), [ops.id]);
      assert.deepEqual(await c.store.emitOperational([notice], T0 + 5), []);
      assert.equal((await logged('sluice.secret.rotated')).length, 1);
    });
  });
}

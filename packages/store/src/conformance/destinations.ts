/** Store conformance: tenants and destinations (create, read, patch, delete, list). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY, newId } from '@sluice/core';
import type { ClaimedDelivery, Destination, DestinationPatch } from '../index.ts';
import { completion, newDestination, newEvent, newTenant, type OpenStore, T0, useStore } from './fixtures.ts';

export function destinationCases(open: OpenStore): void {
  describe('tenants', () => {
    const ctx = useStore(open);

    it('are found by id and by API key hash', async () => {
      const other = newTenant(T0 + 5);
      await ctx.store.createTenant(other, 'hash-other');
      assert.deepEqual(await ctx.store.getTenant(ctx.tenant.id), ctx.tenant);
      assert.deepEqual(await ctx.store.getTenant(other.id), other);
      assert.deepEqual((await ctx.store.keyByHash(`hash-${ctx.tenant.id}`))?.tenant, ctx.tenant);
      assert.deepEqual((await ctx.store.keyByHash('hash-other'))?.tenant, other);
    });

    it('a missing tenant or key hash is undefined', async () => {
      assert.equal(await ctx.store.getTenant(newId('ten')), undefined);
      assert.equal((await ctx.store.keyByHash('no-such-hash'))?.tenant, undefined);
    });
  });

  describe('destinations', () => {
    const ctx = useStore(open);

    it('are created active and read back as created', async () => {
      const input = newDestination(ctx.tenant.id, {
        name: null,
        maxConcurrency: 4,
        eventTypes: ['order.*', 'invoice.paid'],
        rateLimit: { limit: 600, period: 'minute' },
        secrets: [
          { secret: 'whsec_bmV3', expiresAt: null },
          { secret: 'whsec_b2xk', expiresAt: T0 + 86_400_000 },
        ],
      });
      const created = await ctx.store.createDestination(input, T0 + 1);
      const expected: Destination = {
        ...input,
        state: 'active',
        disabledReason: null,
        createdAt: T0 + 1,
        updatedAt: T0 + 1,
        health: { ...HEALTHY },
      };
      assert.deepEqual(created, expected);
      assert.deepEqual(await ctx.store.getDestination(input.id), expected);
      assert.equal(await ctx.store.getDestination(newId('dst')), undefined);
    });

    it('keep a burst allowance and adaptive pacing, and drop the burst with a new rate limit', async () => {
      const input = newDestination(ctx.tenant.id, {
        rateLimit: { limit: 2, period: 'second', burst: 10 },
        adaptive: true,
      });
      const created = await ctx.store.createDestination(input, T0 + 1);
      assert.deepEqual(await ctx.store.getDestination(input.id), created);
      assert.deepEqual(created.rateLimit, { limit: 2, period: 'second', burst: 10 });
      assert.equal(created.adaptive, true);
      const updated = await ctx.store.updateDestination(
        created.id,
        { rateLimit: { limit: 3, period: 'second' }, adaptive: false },
        T0 + 2,
      );
      const expected = {
        ...created,
        rateLimit: { limit: 3, period: 'second' as const },
        adaptive: false,
        updatedAt: T0 + 2,
      };
      assert.deepEqual(updated, expected);
      assert.deepEqual(await ctx.store.getDestination(created.id), expected);
    });

    it('an update patches the given fields and keeps the rest', async () => {
      const created = await ctx.destination();
      const updated = await ctx.store.updateDestination(
        created.id,
        { rateLimit: { limit: 5, period: 'hour' } },
        T0 + 10,
      );
      const expected = { ...created, rateLimit: { limit: 5, period: 'hour' as const }, updatedAt: T0 + 10 };
      assert.deepEqual(updated, expected);
      assert.deepEqual(await ctx.store.getDestination(created.id), expected);
    });

    it('rateLimitChanges: each change of the rate limit, with before and after, in [from, to)', async () => {
      const created = await ctx.destination({ rateLimit: { limit: 20, period: 'second' } });
      const other = await ctx.destination();
      await ctx.store.updateDestination(created.id, { rateLimit: { limit: 5, period: 'second' } }, T0 + 10);
      await ctx.store.updateDestination(created.id, { name: 'renamed', timeoutMs: 900 }, T0 + 20);
      await ctx.store.updateDestination(created.id, { rateLimit: { limit: 5, period: 'second' } }, T0 + 30);
      await ctx.store.updateDestination(
        created.id,
        { rateLimit: { limit: 5, period: 'second', burst: 9 } },
        T0 + 40,
      );
      await ctx.store.updateDestination(other.id, { rateLimit: { limit: 1, period: 'hour' } }, T0 + 40);
      // The same limit again, or another field, is no change; a burst is.
      assert.deepEqual(await ctx.store.rateLimitChanges(created.id, T0, T0 + 41), [
        { at: T0 + 10, from: { limit: 20, period: 'second' }, to: { limit: 5, period: 'second' } },
        {
          at: T0 + 40,
          from: { limit: 5, period: 'second' },
          to: { limit: 5, period: 'second', burst: 9 },
        },
      ]);
      assert.equal((await ctx.store.rateLimitChanges(created.id, T0 + 11, T0 + 40)).length, 0);
      assert.equal((await ctx.store.rateLimitChanges(other.id, T0, T0 + 41)).length, 1);
    });

    it('retention deletes rate-limit changes older than the cutoff', async () => {
      const created = await ctx.destination({ rateLimit: { limit: 20, period: 'second' } });
      await ctx.store.updateDestination(created.id, { rateLimit: { limit: 5, period: 'second' } }, T0 + 10);
      await ctx.store.updateDestination(created.id, { rateLimit: { limit: 6, period: 'second' } }, T0 + 30);
      assert.equal((await ctx.store.deleteExpired(T0 + 20, 100)).transitions, 1);
      assert.deepEqual(
        (await ctx.store.rateLimitChanges(created.id, T0, T0 + 31)).map((c) => c.at),
        [T0 + 30],
        'the later one is kept',
      );
    });

    it('an update can change every patchable field', async () => {
      const created = await ctx.destination();
      const patch = {
        name: 'renamed',
        url: 'https://other.example.com/in',
        rateLimit: { limit: 2, period: 'second' as const },
        maxConcurrency: 1,
        eventTypes: ['invoice.*'],
        retry: { maxAttempts: 8, initialDelayMs: 30_000, maxDelayMs: 43_200_000 },
        timeoutMs: 5_000,
        secrets: [{ secret: 'whsec_cm90YXRlZA', expiresAt: null }],
        state: 'paused' as const,
        disabledReason: null,
      };
      const expected = { ...created, ...patch, updatedAt: T0 + 20 };
      assert.deepEqual(await ctx.store.updateDestination(created.id, patch, T0 + 20), expected);
      assert.deepEqual(await ctx.store.getDestination(created.id), expected);
    });

    it('an update sets and clears the state and its reason', async () => {
      const created = await ctx.destination();
      const disabled = await ctx.store.updateDestination(
        created.id,
        { state: 'disabled', disabledReason: 'gone' },
        T0 + 1,
      );
      assert.equal(disabled?.state, 'disabled');
      assert.equal(disabled?.disabledReason, 'gone');
      const resumed = await ctx.store.updateDestination(
        created.id,
        { state: 'active', disabledReason: null },
        T0 + 2,
      );
      assert.equal(resumed?.state, 'active');
      assert.equal(resumed?.disabledReason, null);
      assert.equal((await ctx.store.getDestination(created.id))?.state, 'active');
    });

    it('an update ignores fields given as undefined (a Partial patch)', async () => {
      const created = await ctx.destination();
      const patch: DestinationPatch = { name: undefined, rateLimit: undefined, maxConcurrency: 3 };
      const expected = { ...created, maxConcurrency: 3, updatedAt: T0 + 10 };
      assert.deepEqual(await ctx.store.updateDestination(created.id, patch, T0 + 10), expected);
      assert.deepEqual(await ctx.store.getDestination(created.id), expected);
    });

    it('an update of a missing or deleted destination is undefined', async () => {
      assert.equal(await ctx.store.updateDestination(newId('dst'), { name: 'x' }, T0), undefined);
      const created = await ctx.destination();
      assert.equal(await ctx.store.deleteDestination(created.id, T0 + 1), true);
      assert.equal(await ctx.store.updateDestination(created.id, { name: 'x' }, T0 + 2), undefined);
    });

    it('a delete cancels undelivered deliveries and the destination is then not found', async () => {
      const doomed = await ctx.destination();
      const kept = await ctx.destination();
      const [delivered, queued, retrying, pending] = await ctx.accept(doomed.id, 4, T0);
      const [keptPending] = await ctx.accept(kept.id, 1, T0);
      const claimed = await ctx.claim(doomed.id, 2, T0);
      assert.deepEqual(
        claimed.map((c) => c.id),
        [delivered, queued],
      );
      const [third] = await ctx.claim(doomed.id, 1, T0);
      assert.equal(third?.id, retrying);
      await ctx.store.completeAttempts(
        [
          completion(claimed[0] as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 1 }),
          completion(third as ClaimedDelivery, {
            status: 'pending',
            startedAt: T0 + 1,
            nextAttemptAt: T0 + 999,
          }),
        ],
        T0 + 2,
      );
      assert.equal(await ctx.store.deleteDestination(doomed.id, T0 + 3), true);

      assert.equal(await ctx.store.getDestination(doomed.id), undefined);
      assert.equal(await ctx.statusOf(delivered as string), 'delivered');
      for (const id of [queued, pending, retrying])
        assert.equal(await ctx.statusOf(id as string), 'cancelled');
      assert.deepEqual(await ctx.claim(doomed.id, 10, T0 + 10_000), []);
      assert.deepEqual(await ctx.store.destinationWork(doomed.id), { nextPendingAt: null, inQueue: 0 });
      assert.equal(await ctx.statusOf(keptPending as string), 'pending', 'other destinations are untouched');
      assert.equal(await ctx.store.deleteDestination(doomed.id, T0 + 4), false, 'deleted once');
      assert.equal(await ctx.store.deleteDestination(newId('dst'), T0 + 4), false);
    });

    it('a delete cancels a dead delivery: nothing may replay it any more', async () => {
      const doomed = await ctx.destination();
      const [dead] = await ctx.accept(doomed.id, 1, T0);
      const [claimed] = await ctx.claim(doomed.id, 1, T0);
      assert.equal(claimed?.id, dead);
      await ctx.store.completeAttempts(
        [completion(claimed as ClaimedDelivery, { status: 'dead', startedAt: T0 + 1 })],
        T0 + 2,
      );
      assert.equal(await ctx.statusOf(dead as string), 'dead');
      assert.equal(await ctx.store.deleteDestination(doomed.id, T0 + 3), true);
      assert.equal(await ctx.statusOf(dead as string), 'cancelled');
    });

    it('cancelOrphans: pending deliveries accepted for a destination being deleted are cancelled', async () => {
      const doomed = await ctx.destination();
      const kept = await ctx.destination();
      await ctx.store.deleteDestination(doomed.id, T0 + 1);
      // The race: the API checked the destination, then the delete committed, then the accept.
      const [late] = await ctx.store.acceptEvents(ctx.tenant.id, [newEvent([doomed.id, kept.id])], T0 + 2);
      const [orphan, live] = late?.event.deliveries ?? [];
      assert.equal(await ctx.statusOf(orphan?.id as string), 'pending');
      assert.equal(await ctx.store.cancelOrphans(T0 + 3), 1);
      assert.equal(await ctx.statusOf(orphan?.id as string), 'cancelled');
      assert.equal(await ctx.statusOf(live?.id as string), 'pending', 'a live destination keeps its work');
      assert.equal(await ctx.store.cancelOrphans(T0 + 4), 0, 'nothing left to cancel');
    });

    it("a ctx.tenant's list excludes deleted destinations and other tenants'", async () => {
      const a = await ctx.destination();
      const b = await ctx.destination();
      const gone = await ctx.destination();
      const other = newTenant();
      await ctx.store.createTenant(other, 'hash-other');
      const theirs = await ctx.store.createDestination(newDestination(other.id), T0);
      await ctx.store.deleteDestination(gone.id, T0 + 1);
      const sortById = (ds: Destination[]) => [...ds].sort((x, y) => x.id.localeCompare(y.id));
      assert.deepEqual(sortById(await ctx.store.listDestinations(ctx.tenant.id)), sortById([a, b]));
      assert.deepEqual(await ctx.store.listDestinations(other.id), [theirs]);
      assert.deepEqual(await ctx.store.listDestinations(newId('ten')), []);
    });
  });
}

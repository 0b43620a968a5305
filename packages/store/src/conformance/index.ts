/**
 * The Store conformance suite (STYLE: one suite, every implementation). It speaks only the
 * `Store` interface, so the SQLite store and the Postgres store run it unchanged:
 *
 *   storeConformance('SqliteStore', async () => ({ store, cleanup }));
 *
 * `open` returns a fresh, empty, migrated store per test; `cleanup` releases it and must
 * accept a store the test has already closed. Every time is an explicit number from T0:
 * nothing here reads the wall clock.
 */

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { HEALTHY, newId } from '@sluice/core';
import type {
  AcceptResult,
  Attempt,
  ClaimedDelivery,
  CompletedAttempt,
  DeliveryFilter,
  Destination,
  DestinationPatch,
  NewDestination,
  NewEvent,
  Page,
  PageRequest,
  RetentionResult,
  Store,
  Tenant,
} from '../store.ts';
import { alertConformance } from './alerts.ts';
import { healthConformance } from './health.ts';
import { orderingConformance } from './ordering.ts';

type OpenStore = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

const T0 = 1_700_000_000_000;

/** The deliveries a claim took (most tests look only at those). */
async function claim(
  store: Store,
  destinationId: string,
  max: number,
  now: number,
): Promise<ClaimedDelivery[]> {
  return (await store.claimDue(destinationId, max, now)).deliveries;
}

function newTenant(createdAt = T0): Tenant {
  return { id: newId('ten'), name: 'Acme', createdAt };
}

/** A destination as the store tests create it (10/s, nothing else set); other suites use it too. */
export function newDestination(tenantId: string, overrides: Partial<NewDestination> = {}): NewDestination {
  return {
    id: newId('dst'),
    tenantId,
    name: 'orders',
    url: 'https://hooks.example.com/orders',
    rateLimit: { limit: 10, period: 'second' },
    maxConcurrency: null,
    adaptive: false,
    ordering: 'none',
    eventTypes: ['*'],
    retry: { maxAttempts: 3, initialDelayMs: 1_000, maxDelayMs: 60_000 },
    timeoutMs: 15_000,
    secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', expiresAt: null }],
    ...overrides,
  };
}

/** A delivery as a tick hands it to the delivery queue (queue and runner tests). */
export function claimedDelivery(id: string, overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id,
    eventId: `evt_${id}`,
    destinationId: 'dst_1',
    eventType: 'order.created',
    payload: '{}',
    sequence: 1,
    attempts: 0,
    attemptBase: 0,
    eventCreatedAt: 0,
    ...overrides,
  };
}

function newEvent(destinationIds: string[], overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    type: 'order.created',
    payload: '{"order":1}',
    idempotencyKey: null,
    destinationIds,
    ...overrides,
  };
}

interface Outcome {
  status: CompletedAttempt['status'];
  startedAt: number;
  nextAttemptAt?: number | null;
  statusCode?: number | null;
  errorCode?: string | null;
  disableDestination?: boolean;
}

/** The completion of the next attempt of a claimed delivery. */
function completion(claimed: ClaimedDelivery, outcome: Outcome): CompletedAttempt {
  const failed = outcome.status !== 'delivered';
  const attempt: Attempt = {
    id: newId('att'),
    deliveryId: claimed.id,
    destinationId: claimed.destinationId,
    attempt: claimed.attempts + 1,
    startedAt: outcome.startedAt,
    finishedAt: outcome.startedAt + 7,
    statusCode: outcome.statusCode === undefined ? (failed ? 500 : 200) : outcome.statusCode,
    errorCode: outcome.errorCode ?? null,
    errorMessage: outcome.errorCode ? 'connect ECONNREFUSED' : null,
    responseExcerpt: failed ? 'oops' : 'ok',
  };
  return {
    attempt,
    status: outcome.status,
    nextAttemptAt: outcome.nextAttemptAt ?? null,
    disableDestination: outcome.disableDestination ?? false,
  };
}

const byDestination = <T extends { destinationId: string }>(rows: T[]): T[] =>
  [...rows].sort((a, b) => a.destinationId.localeCompare(b.destinationId));

export function storeConformance(name: string, open: OpenStore): void {
  healthConformance(name, open);
  describe(name, () => {
    alertConformance(open);

    let store: Store;
    let cleanup: () => Promise<void>;
    let tenant: Tenant;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
      tenant = newTenant();
      await store.createTenant(tenant, `hash-${tenant.id}`);
    });
    afterEach(async () => {
      await cleanup();
    });

    const destination = (overrides: Partial<NewDestination> = {}, now = T0): Promise<Destination> =>
      store.createDestination(newDestination(tenant.id, overrides), now);

    /** Accepts one event per item for `destinationId`; returns the delivery ids, in order. */
    const accept = async (destinationId: string, count: number, now: number): Promise<string[]> => {
      const events = Array.from({ length: count }, (_, i) =>
        newEvent([destinationId], { payload: `{"n":${i}}` }),
      );
      const results = await store.acceptEvents(tenant.id, events, now);
      return results.map((r) => r.event.deliveries[0]?.id ?? assert.fail('no delivery'));
    };

    const statusOf = async (deliveryId: string) => (await store.getDelivery(deliveryId))?.delivery.status;

    /** Makes attempts for `destinationId` that started at `startedAts`, in that order. */
    const attemptsAt = async (destinationId: string, startedAts: number[], now: number): Promise<void> => {
      await accept(destinationId, startedAts.length, now);
      const claimed = await claim(store, destinationId, startedAts.length, now);
      assert.equal(claimed.length, startedAts.length);
      await store.completeAttempts(
        claimed.map((c, i) => completion(c, { status: 'delivered', startedAt: startedAts[i] ?? 0 })),
        now,
      );
    };

    describe('tenants', () => {
      it('are found by id and by API key hash', async () => {
        const other = newTenant(T0 + 5);
        await store.createTenant(other, 'hash-other');
        assert.deepEqual(await store.getTenant(tenant.id), tenant);
        assert.deepEqual(await store.getTenant(other.id), other);
        assert.deepEqual(await store.tenantByKeyHash(`hash-${tenant.id}`), tenant);
        assert.deepEqual(await store.tenantByKeyHash('hash-other'), other);
      });

      it('a missing tenant or key hash is undefined', async () => {
        assert.equal(await store.getTenant(newId('ten')), undefined);
        assert.equal(await store.tenantByKeyHash('no-such-hash'), undefined);
      });
    });

    describe('destinations', () => {
      it('are created active and read back as created', async () => {
        const input = newDestination(tenant.id, {
          name: null,
          maxConcurrency: 4,
          eventTypes: ['order.*', 'invoice.paid'],
          rateLimit: { limit: 600, period: 'minute' },
          secrets: [
            { secret: 'whsec_bmV3', expiresAt: null },
            { secret: 'whsec_b2xk', expiresAt: T0 + 86_400_000 },
          ],
        });
        const created = await store.createDestination(input, T0 + 1);
        const expected: Destination = {
          ...input,
          state: 'active',
          disabledReason: null,
          createdAt: T0 + 1,
          updatedAt: T0 + 1,
          health: { ...HEALTHY },
        };
        assert.deepEqual(created, expected);
        assert.deepEqual(await store.getDestination(input.id), expected);
        assert.equal(await store.getDestination(newId('dst')), undefined);
      });

      it('keep a burst allowance and adaptive pacing, and drop the burst with a new rate limit', async () => {
        const input = newDestination(tenant.id, {
          rateLimit: { limit: 2, period: 'second', burst: 10 },
          adaptive: true,
        });
        const created = await store.createDestination(input, T0 + 1);
        assert.deepEqual(await store.getDestination(input.id), created);
        assert.deepEqual(created.rateLimit, { limit: 2, period: 'second', burst: 10 });
        assert.equal(created.adaptive, true);
        const updated = await store.updateDestination(
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
        assert.deepEqual(await store.getDestination(created.id), expected);
      });

      it('an update patches the given fields and keeps the rest', async () => {
        const created = await destination();
        const updated = await store.updateDestination(
          created.id,
          { rateLimit: { limit: 5, period: 'hour' } },
          T0 + 10,
        );
        const expected = { ...created, rateLimit: { limit: 5, period: 'hour' as const }, updatedAt: T0 + 10 };
        assert.deepEqual(updated, expected);
        assert.deepEqual(await store.getDestination(created.id), expected);
      });

      it('an update can change every patchable field', async () => {
        const created = await destination();
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
        assert.deepEqual(await store.updateDestination(created.id, patch, T0 + 20), expected);
        assert.deepEqual(await store.getDestination(created.id), expected);
      });

      it('an update sets and clears the state and its reason', async () => {
        const created = await destination();
        const disabled = await store.updateDestination(
          created.id,
          { state: 'disabled', disabledReason: 'gone' },
          T0 + 1,
        );
        assert.equal(disabled?.state, 'disabled');
        assert.equal(disabled?.disabledReason, 'gone');
        const resumed = await store.updateDestination(
          created.id,
          { state: 'active', disabledReason: null },
          T0 + 2,
        );
        assert.equal(resumed?.state, 'active');
        assert.equal(resumed?.disabledReason, null);
        assert.equal((await store.getDestination(created.id))?.state, 'active');
      });

      it('an update ignores fields given as undefined (a Partial patch)', async () => {
        const created = await destination();
        const patch: DestinationPatch = { name: undefined, rateLimit: undefined, maxConcurrency: 3 };
        const expected = { ...created, maxConcurrency: 3, updatedAt: T0 + 10 };
        assert.deepEqual(await store.updateDestination(created.id, patch, T0 + 10), expected);
        assert.deepEqual(await store.getDestination(created.id), expected);
      });

      it('an update of a missing or deleted destination is undefined', async () => {
        assert.equal(await store.updateDestination(newId('dst'), { name: 'x' }, T0), undefined);
        const created = await destination();
        assert.equal(await store.deleteDestination(created.id, T0 + 1), true);
        assert.equal(await store.updateDestination(created.id, { name: 'x' }, T0 + 2), undefined);
      });

      it('a delete cancels undelivered deliveries and the destination is then not found', async () => {
        const doomed = await destination();
        const kept = await destination();
        const [delivered, queued, retrying, pending] = await accept(doomed.id, 4, T0);
        const [keptPending] = await accept(kept.id, 1, T0);
        const claimed = await claim(store, doomed.id, 2, T0);
        assert.deepEqual(
          claimed.map((c) => c.id),
          [delivered, queued],
        );
        const [third] = await claim(store, doomed.id, 1, T0);
        assert.equal(third?.id, retrying);
        await store.completeAttempts(
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
        assert.equal(await store.deleteDestination(doomed.id, T0 + 3), true);

        assert.equal(await store.getDestination(doomed.id), undefined);
        assert.equal(await statusOf(delivered as string), 'delivered');
        for (const id of [queued, pending, retrying]) assert.equal(await statusOf(id as string), 'cancelled');
        assert.deepEqual(await claim(store, doomed.id, 10, T0 + 10_000), []);
        assert.deepEqual(await store.destinationWork(doomed.id), { nextPendingAt: null, inQueue: 0 });
        assert.equal(await statusOf(keptPending as string), 'pending', 'other destinations are untouched');
        assert.equal(await store.deleteDestination(doomed.id, T0 + 4), false, 'deleted once');
        assert.equal(await store.deleteDestination(newId('dst'), T0 + 4), false);
      });

      it('cancelOrphans: pending deliveries accepted for a destination being deleted are cancelled', async () => {
        const doomed = await destination();
        const kept = await destination();
        await store.deleteDestination(doomed.id, T0 + 1);
        // The race: the API checked the destination, then the delete committed, then the accept.
        const [late] = await store.acceptEvents(tenant.id, [newEvent([doomed.id, kept.id])], T0 + 2);
        const [orphan, live] = late?.event.deliveries ?? [];
        assert.equal(await statusOf(orphan?.id as string), 'pending');
        assert.equal(await store.cancelOrphans(T0 + 3), 1);
        assert.equal(await statusOf(orphan?.id as string), 'cancelled');
        assert.equal(await statusOf(live?.id as string), 'pending', 'a live destination keeps its work');
        assert.equal(await store.cancelOrphans(T0 + 4), 0, 'nothing left to cancel');
      });

      it("a tenant's list excludes deleted destinations and other tenants'", async () => {
        const a = await destination();
        const b = await destination();
        const gone = await destination();
        const other = newTenant();
        await store.createTenant(other, 'hash-other');
        const theirs = await store.createDestination(newDestination(other.id), T0);
        await store.deleteDestination(gone.id, T0 + 1);
        const sortById = (ds: Destination[]) => [...ds].sort((x, y) => x.id.localeCompare(y.id));
        assert.deepEqual(sortById(await store.listDestinations(tenant.id)), sortById([a, b]));
        assert.deepEqual(await store.listDestinations(other.id), [theirs]);
        assert.deepEqual(await store.listDestinations(newId('ten')), []);
      });
    });

    describe('acceptEvents', () => {
      it('writes each event with one pending delivery per destination, due now', async () => {
        const a = await destination();
        const b = await destination();
        const results = await store.acceptEvents(
          tenant.id,
          [newEvent([a.id, b.id]), newEvent([b.id], { type: 'order.paid' })],
          T0 + 5,
        );
        assert.equal(results.length, 2);
        assert.ok(results.every((r) => !r.replayed));
        assert.deepEqual(
          results.map((r) => r.event.deliveries.map((d) => d.destinationId)),
          [[a.id, b.id], [b.id]],
        );
        const [first] = results;
        assert.match(first?.event.id ?? '', /^evt_/);
        const found = await store.getDelivery(first?.event.deliveries[0]?.id ?? '');
        assert.deepEqual(found, {
          delivery: {
            id: first?.event.deliveries[0]?.id,
            eventId: first?.event.id,
            destinationId: a.id,
            tenantId: tenant.id,
            sequence: null,
            status: 'pending',
            attempts: 0,
            attemptBase: 0,
            nextAttemptAt: T0 + 5,
            lastError: null,
            createdAt: T0 + 5,
            updatedAt: T0 + 5,
          },
          attempts: [],
        });
        assert.match(first?.event.deliveries[0]?.id ?? '', /^dlv_/);
        assert.equal((await claim(store, b.id, 10, T0 + 5)).length, 2, 'due at once');
        assert.equal(await store.getDelivery(newId('dlv')), undefined);
      });

      it('an idempotency key answers with the first event and creates nothing', async () => {
        const a = await destination();
        const b = await destination();
        const [first] = await store.acceptEvents(
          tenant.id,
          [newEvent([a.id, b.id], { idempotencyKey: 'order-1', payload: '{"v":1}' })],
          T0,
        );
        const [again, fresh] = await store.acceptEvents(
          tenant.id,
          [
            newEvent([a.id], { idempotencyKey: 'order-1', payload: '{"v":2}' }),
            newEvent([a.id], { idempotencyKey: 'order-2' }),
          ],
          T0 + 100,
        );
        assert.equal(first?.replayed, false);
        assert.deepEqual(again, { event: first?.event, replayed: true });
        assert.equal(fresh?.replayed, false);
        const claimed = await claim(store, a.id, 10, T0 + 100);
        assert.deepEqual(
          claimed.map((c) => [c.eventId, c.payload]),
          [
            [first?.event.id, '{"v":1}'],
            [fresh?.event.id, '{"order":1}'],
          ],
        );
        assert.equal((await claim(store, b.id, 10, T0 + 100)).length, 1);
      });

      it('a key repeated within one batch answers with the first of the batch', async () => {
        const a = await destination();
        const [one, two] = await store.acceptEvents(
          tenant.id,
          [newEvent([a.id], { idempotencyKey: 'k' }), newEvent([a.id], { idempotencyKey: 'k' })],
          T0,
        );
        assert.equal(one?.replayed, false);
        assert.deepEqual(two, { event: one?.event, replayed: true });
        assert.equal((await claim(store, a.id, 10, T0)).length, 1);
      });

      it('the same key in another tenant is independent; events without a key never collide', async () => {
        const a = await destination();
        const other = newTenant();
        await store.createTenant(other, 'hash-other');
        const theirs = await store.createDestination(newDestination(other.id), T0);
        const [mine] = await store.acceptEvents(tenant.id, [newEvent([a.id], { idempotencyKey: 'k' })], T0);
        const [their] = await store.acceptEvents(
          other.id,
          [newEvent([theirs.id], { idempotencyKey: 'k' })],
          T0,
        );
        assert.equal(their?.replayed, false);
        assert.notEqual(their?.event.id, mine?.event.id);
        const unkeyed = await store.acceptEvents(tenant.id, [newEvent([a.id]), newEvent([a.id])], T0);
        assert.ok(unkeyed.every((r) => !r.replayed));
        assert.equal((await claim(store, a.id, 10, T0)).length, 3);
        assert.equal((await claim(store, theirs.id, 10, T0)).length, 1);
      });

      it('a batch whose later event fails leaves nothing', async () => {
        const a = await destination();
        const broken = newEvent([a.id], { payload: null as unknown as string });
        await assert.rejects(
          store.acceptEvents(tenant.id, [newEvent([a.id], { idempotencyKey: 'first' }), broken], T0),
        );
        assert.deepEqual(await store.destinationWork(a.id), { nextPendingAt: null, inQueue: 0 });
        assert.deepEqual(await claim(store, a.id, 10, T0), []);
        const [retried] = await store.acceptEvents(
          tenant.id,
          [newEvent([a.id], { idempotencyKey: 'first' })],
          T0,
        );
        assert.equal(retried?.replayed, false, 'the failed batch did not keep its idempotency key');
      });

      it('a batch naming a destination that does not exist leaves nothing', async (t) => {
        const a = await destination();
        const accepted = await store
          .acceptEvents(tenant.id, [newEvent([a.id]), newEvent([newId('dst')])], T0)
          .then(
            () => true,
            () => false,
          );
        if (accepted) {
          t.skip('this store accepts deliveries for a destination id it does not have');
          return;
        }
        assert.deepEqual(await store.destinationWork(a.id), { nextPendingAt: null, inQueue: 0 });
      });
    });

    describe('claimDue', () => {
      it('claims due deliveries oldest first (by due time, then insertion), at most max', async () => {
        const a = await destination();
        const [late] = await accept(a.id, 1, T0 + 30);
        const [early] = await accept(a.id, 1, T0 + 10);
        const [x, y] = await accept(a.id, 2, T0 + 20);
        const [z] = await accept(a.id, 1, T0 + 20);
        const firstTwo = await claim(store, a.id, 2, T0 + 100);
        const rest = await claim(store, a.id, 10, T0 + 100);
        assert.deepEqual(
          firstTwo.map((c) => c.id),
          [early, x],
        );
        assert.deepEqual(
          rest.map((c) => c.id),
          [y, z, late],
        );
        assert.deepEqual(await claim(store, a.id, 10, T0 + 100), [], 'never claimed twice');
      });

      it('claims only due deliveries of that destination, and none with max 0', async () => {
        const a = await destination();
        const b = await destination();
        const [due] = await accept(a.id, 1, T0 + 50);
        await accept(b.id, 1, T0);
        assert.deepEqual(await claim(store, a.id, 0, T0 + 50), []);
        assert.deepEqual(await claim(store, a.id, 10, T0 + 49), [], 'not due yet');
        assert.deepEqual(
          (await claim(store, a.id, 10, T0 + 50)).map((c) => c.id),
          [due],
          'due when nextAttemptAt = now',
        );
      });

      it('claimed deliveries become queued and carry what the request needs', async () => {
        const a = await destination();
        const payload = '{"b": 1,  "a":"é ✓ \\u00e9"}\n';
        const [result] = await store.acceptEvents(
          tenant.id,
          [newEvent([a.id], { type: 'invoice.paid', payload })],
          T0 + 3,
        );
        const deliveryId = result?.event.deliveries[0]?.id as string;
        const claimed = await claim(store, a.id, 5, T0 + 8);
        assert.deepEqual(claimed, [
          {
            id: deliveryId,
            eventId: result?.event.id,
            destinationId: a.id,
            eventType: 'invoice.paid',
            payload,
            sequence: 1,
            attempts: 0,
            attemptBase: 0,
            eventCreatedAt: T0 + 3,
          },
        ]);
        assert.equal(await statusOf(deliveryId), 'queued');
        assert.deepEqual(await store.destinationWork(a.id), { nextPendingAt: null, inQueue: 1 });
      });
    });

    describe('completeAttempts', () => {
      it('records attempts in order and moves deliveries to pending, then dead or delivered', async () => {
        const a = await destination();
        const [failing, ok] = await accept(a.id, 2, T0);
        const claimed = await claim(store, a.id, 2, T0);
        const [c1, c2] = claimed as [ClaimedDelivery, ClaimedDelivery];
        const retry = completion(c1, { status: 'pending', startedAt: T0 + 1, nextAttemptAt: T0 + 1_000 });
        const success = completion(c2, { status: 'delivered', startedAt: T0 + 2 });
        await store.completeAttempts([retry, success], T0 + 10);

        const afterRetry = await store.getDelivery(failing as string);
        assert.equal(afterRetry?.delivery.status, 'pending');
        assert.equal(afterRetry?.delivery.attempts, 1);
        assert.equal(afterRetry?.delivery.nextAttemptAt, T0 + 1_000);
        assert.notEqual(afterRetry?.delivery.lastError, null);
        assert.equal(afterRetry?.delivery.updatedAt, T0 + 10);
        const delivered = await store.getDelivery(ok as string);
        assert.equal(delivered?.delivery.status, 'delivered');
        assert.equal(delivered?.delivery.attempts, 1);
        assert.equal(delivered?.delivery.lastError, null);
        assert.deepEqual(delivered?.attempts, [success.attempt]);

        assert.deepEqual(await claim(store, a.id, 10, T0 + 999), [], 'the retry waits for its time');
        const [again] = await claim(store, a.id, 10, T0 + 1_000);
        assert.equal(again?.id, failing);
        assert.equal(again?.attempts, 1);
        const last = completion(again as ClaimedDelivery, {
          status: 'dead',
          startedAt: T0 + 1_001,
          statusCode: null,
          errorCode: 'UND_ERR_CONNECT_TIMEOUT',
        });
        await store.completeAttempts([last], T0 + 1_010);
        const dead = await store.getDelivery(failing as string);
        assert.equal(dead?.delivery.status, 'dead');
        assert.equal(dead?.delivery.attempts, 2);
        assert.deepEqual(dead?.attempts, [retry.attempt, last.attempt]);
        assert.deepEqual(await claim(store, a.id, 10, T0 + 100_000), []);
      });

      it('disableDestination disables the destination with a reason', async () => {
        const a = await destination();
        await accept(a.id, 1, T0);
        const [claimed] = await claim(store, a.id, 1, T0);
        await store.completeAttempts(
          [
            completion(claimed as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0 + 1,
              statusCode: 410,
              nextAttemptAt: T0 + 2,
              disableDestination: true,
            }),
          ],
          T0 + 5,
        );
        const disabled = await store.getDestination(a.id);
        assert.equal(disabled?.state, 'disabled');
        assert.equal(typeof disabled?.disabledReason, 'string');
        assert.notEqual(disabled?.disabledReason, '');
        assert.equal(await statusOf(claimed?.id as string), 'pending', 'nothing is lost');
        assert.deepEqual(await store.pendingDestinations(), []);
      });

      it('a completion for a delivery no longer queued does not resurrect it', async () => {
        const a = await destination();
        const [cancelled] = await accept(a.id, 1, T0);
        const [claimed] = await claim(store, a.id, 1, T0);
        await store.deleteDestination(a.id, T0 + 1);
        await store.completeAttempts(
          [
            completion(claimed as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0,
              nextAttemptAt: T0 + 5,
            }),
          ],
          T0 + 2,
        );
        assert.equal(await statusOf(cancelled as string), 'cancelled');
        await store.completeAttempts(
          [completion(claimed as ClaimedDelivery, { status: 'delivered', startedAt: T0 })],
          T0 + 3,
        );
        assert.equal(await statusOf(cancelled as string), 'cancelled');

        const b = await destination();
        const [done] = await accept(b.id, 1, T0);
        const [twice] = await claim(store, b.id, 1, T0);
        await store.completeAttempts(
          [completion(twice as ClaimedDelivery, { status: 'delivered', startedAt: T0 })],
          T0,
        );
        await store.completeAttempts(
          [completion(twice as ClaimedDelivery, { status: 'pending', startedAt: T0, nextAttemptAt: T0 })],
          T0 + 1,
        );
        assert.equal(await statusOf(done as string), 'delivered', 'a repeated completion changes nothing');
        assert.deepEqual(await claim(store, b.id, 10, T0 + 10), []);
        await store.completeAttempts([], T0);
      });
    });

    describe('destination work', () => {
      it('destinationWork: earliest pending time and how many are queued', async () => {
        const a = await destination();
        assert.deepEqual(await store.destinationWork(a.id), { nextPendingAt: null, inQueue: 0 });
        await accept(a.id, 1, T0 + 100);
        await accept(a.id, 1, T0 + 200);
        await accept(a.id, 1, T0 + 300);
        const [first] = await claim(store, a.id, 1, T0 + 150);
        assert.deepEqual(await store.destinationWork(a.id), { nextPendingAt: T0 + 200, inQueue: 1 });
        await store.completeAttempts(
          [
            completion(first as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0 + 150,
              nextAttemptAt: T0 + 50,
            }),
          ],
          T0 + 160,
        );
        assert.deepEqual(await store.destinationWork(a.id), { nextPendingAt: T0 + 50, inQueue: 0 });
      });

      it('claimDue tells when the next delivery left pending is due', async () => {
        const a = await destination();
        assert.deepEqual(await store.claimDue(a.id, 5, T0), { deliveries: [], nextPendingAt: null });
        await accept(a.id, 2, T0 + 100);
        await accept(a.id, 1, T0 + 300);
        const first = await store.claimDue(a.id, 1, T0 + 150);
        assert.equal(first.deliveries.length, 1);
        assert.equal(first.nextPendingAt, T0 + 100, 'the second of the same time is still due');
        const rest = await store.claimDue(a.id, 5, T0 + 150);
        assert.equal(rest.deliveries.length, 1);
        assert.equal(rest.nextPendingAt, T0 + 300, 'what it claimed is not pending any more');
        assert.deepEqual(await store.claimDue(a.id, 0, T0 + 150), {
          deliveries: [],
          nextPendingAt: T0 + 300,
        });
        const last = await store.claimDue(a.id, 5, T0 + 300);
        assert.deepEqual([last.deliveries.length, last.nextPendingAt], [1, null]);
      });

      it('pendingDestinations: active, not deleted, with pending work, and its earliest time', async () => {
        const active = await destination();
        const future = await destination();
        const paused = await destination();
        const disabled = await destination();
        const deleted = await destination();
        const queuedOnly = await destination();
        await destination(); // nothing at all
        const other = newTenant();
        await store.createTenant(other, 'hash-other');
        const theirs = await store.createDestination(newDestination(other.id), T0);

        await accept(active.id, 1, T0 + 100);
        await accept(active.id, 1, T0 + 200);
        const [retried] = await claim(store, active.id, 1, T0 + 100);
        await store.completeAttempts(
          [
            completion(retried as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0 + 100,
              nextAttemptAt: T0 + 900,
            }),
          ],
          T0 + 110,
        );
        await accept(future.id, 1, T0);
        const [later] = await claim(store, future.id, 1, T0);
        await store.completeAttempts(
          [
            completion(later as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0,
              nextAttemptAt: T0 + 10_000,
            }),
          ],
          T0 + 1,
        );
        for (const d of [paused, disabled, deleted, queuedOnly]) await accept(d.id, 1, T0);
        await store.acceptEvents(other.id, [newEvent([theirs.id])], T0 + 7);
        await store.updateDestination(paused.id, { state: 'paused' }, T0 + 1);
        await store.updateDestination(disabled.id, { state: 'disabled', disabledReason: 'gone' }, T0 + 1);
        await store.deleteDestination(deleted.id, T0 + 1);
        await claim(store, queuedOnly.id, 1, T0);

        assert.deepEqual(
          byDestination(await store.pendingDestinations()),
          byDestination([
            { destinationId: active.id, nextPendingAt: T0 + 200 },
            { destinationId: future.id, nextPendingAt: T0 + 10_000 },
            { destinationId: theirs.id, nextPendingAt: T0 + 7 },
          ]),
        );
        // The backlog age reads the same rows: paused, disabled and deleted ones do not count.
        assert.equal(await store.oldestDueAt(T0 + 500), T0 + 7);
        assert.equal(await store.oldestDueAt(T0 + 6), null, 'nothing due yet');
      });

      it('oldestDueAt: null with nothing pending', async () => {
        await destination();
        assert.equal(await store.oldestDueAt(T0), null);
      });
    });

    describe('requeue', () => {
      it('returns deliveries claimed before the cutoff to pending, due now, except those kept', async () => {
        const a = await destination();
        const b = await destination();
        const [a1, a2, a3] = await accept(a.id, 3, T0);
        const [b1, b2] = await accept(b.id, 2, T0);
        await claim(store, a.id, 2, T0 + 10); // a1, a2
        await claim(store, b.id, 1, T0 + 20); // b1
        await claim(store, a.id, 1, T0 + 30); // a3: at the cutoff, not before it
        await claim(store, b.id, 1, T0 + 30); // b2

        assert.deepEqual(
          (await store.staleClaims(T0 + 30)).sort((x, y) => (x.id < y.id ? -1 : 1)),
          [
            [a1, a.id],
            [a2, a.id],
            [b1, b.id],
          ]
            .sort(([x], [y]) => ((x as string) < (y as string) ? -1 : 1))
            .map(([id, destinationId]) => ({ id, destinationId, attempts: 0 })),
          'the candidates: claimed before the cutoff, in id order',
        );
        const requeued = await store.requeue(T0 + 30, new Set([a1 as string]), T0 + 100);
        assert.deepEqual(
          requeued,
          new Map([
            [a.id, 1],
            [b.id, 1],
          ]),
        );
        for (const id of [a1, a3, b2]) assert.equal(await statusOf(id as string), 'queued');
        const back = await store.getDelivery(a2 as string);
        assert.equal(back?.delivery.status, 'pending');
        assert.equal(back?.delivery.nextAttemptAt, T0 + 100);
        assert.equal(back?.delivery.attempts, 0);
        assert.equal(await statusOf(b1 as string), 'pending');
        assert.deepEqual(
          (await claim(store, a.id, 10, T0 + 100)).map((c) => c.id),
          [a2],
        );
        assert.deepEqual(
          await store.requeue(T0 + 30, new Set([a1 as string]), T0 + 200),
          new Map(),
          'nothing else was claimed before the cutoff',
        );
      });

      it('with no cutoff it takes every claimed delivery and leaves the others alone', async () => {
        const a = await destination();
        const gone = await destination();
        const [pending, delivered, dead, queued] = await accept(a.id, 4, T0);
        const [cancelled] = await accept(gone.id, 1, T0);
        await claim(store, gone.id, 1, T0);
        await store.deleteDestination(gone.id, T0 + 1);
        const claimed = await claim(store, a.id, 4, T0);
        await store.completeAttempts(
          [
            completion(claimed[0] as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0,
              nextAttemptAt: T0 + 500,
            }),
            completion(claimed[1] as ClaimedDelivery, { status: 'delivered', startedAt: T0 }),
            completion(claimed[2] as ClaimedDelivery, { status: 'dead', startedAt: T0 }),
          ],
          T0 + 2,
        );
        assert.deepEqual(
          await store.staleClaims(Number.POSITIVE_INFINITY),
          [{ id: queued, destinationId: a.id, attempts: 0 }],
          'settled, pending and cancelled deliveries are no candidates',
        );
        const requeued = await store.requeue(Number.POSITIVE_INFINITY, new Set(), T0 + 50);
        assert.deepEqual(requeued, new Map([[a.id, 1]]));
        assert.equal((await store.getDelivery(queued as string))?.delivery.nextAttemptAt, T0 + 50);
        assert.equal((await store.getDelivery(pending as string))?.delivery.nextAttemptAt, T0 + 500);
        assert.equal(await statusOf(delivered as string), 'delivered');
        assert.equal(await statusOf(dead as string), 'dead');
        assert.equal(await statusOf(cancelled as string), 'cancelled');
      });
    });

    describe('releaseClaims', () => {
      it('returns unstarted claims to pending in their place; anything not queued stays', async () => {
        const a = await destination();
        const [a1, a2, a3, a4] = await accept(a.id, 4, T0);
        const claimed = await claim(store, a.id, 4, T0 + 10);
        await store.completeAttempts(
          [completion(claimed[3] as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 11 })],
          T0 + 12,
        );
        assert.equal(await store.releaseClaims([a1, a2, a4, 'dlv_missing'] as string[], T0 + 20), 2);
        assert.equal(await store.releaseClaims([], T0 + 20), 0);
        for (const id of [a1, a2]) {
          const back = await store.getDelivery(id as string);
          assert.equal(back?.delivery.status, 'pending');
          assert.equal(back?.delivery.nextAttemptAt, T0, 'due as before');
          assert.equal(back?.delivery.attempts, 0);
        }
        assert.equal(await statusOf(a3 as string), 'queued');
        assert.equal(await statusOf(a4 as string), 'delivered');
        assert.deepEqual(
          await store.staleClaims(Number.POSITIVE_INFINITY),
          [{ id: a3, destinationId: a.id, attempts: 0 }],
          'a released delivery is no claim for the sweeper',
        );
        assert.deepEqual(
          (await claim(store, a.id, 10, T0 + 30)).map((c) => c.id),
          [a1, a2],
          'claimed again, oldest first',
        );
      });
    });

    describe('attempt history and counts', () => {
      it('recentAttempts: attempts started since a time, oldest first', async () => {
        const a = await destination();
        const b = await destination();
        await attemptsAt(a.id, [T0 + 300, T0 + 100], T0);
        await attemptsAt(b.id, [T0 + 50, T0 + 200], T0);
        assert.deepEqual(await store.recentAttempts(T0 + 100), [
          { destinationId: a.id, startedAt: T0 + 100, finishedAt: T0 + 107 },
          { destinationId: b.id, startedAt: T0 + 200, finishedAt: T0 + 207 },
          { destinationId: a.id, startedAt: T0 + 300, finishedAt: T0 + 307 },
        ]);
        assert.deepEqual(await store.recentAttempts(T0 + 301), []);
      });

      it('attemptTimes: start times in [from, to), sorted, of one destination', async () => {
        const a = await destination();
        const b = await destination();
        await attemptsAt(a.id, [T0 + 400, T0 + 200, T0 + 100, T0 + 300, T0 + 250], T0);
        await attemptsAt(b.id, [T0 + 260], T0);
        assert.deepEqual(await store.attemptTimes(a.id, T0 + 200, T0 + 400), [T0 + 200, T0 + 250, T0 + 300]);
        assert.deepEqual(await store.attemptTimes(a.id, T0 + 500, T0 + 600), []);
      });

      it('countsFor: pending, in queue, oldest pending, and delivered/dead within the span', async () => {
        const a = await destination();
        const b = await destination();
        assert.deepEqual(await store.countsFor(a.id, T0, T0 + 10), {
          pending: 0,
          inQueue: 0,
          oldestPendingAt: null,
          delivered: 0,
          dead: 0,
        });
        // Delivered before the span: not counted.
        await accept(a.id, 1, T0 + 100);
        const [old] = await claim(store, a.id, 1, T0 + 100);
        await store.completeAttempts(
          [completion(old as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 100 })],
          T0 + 500,
        );
        // Created at T0 + 200, pending again with a later retry: the oldest pending.
        await accept(a.id, 1, T0 + 200);
        const [retried] = await claim(store, a.id, 1, T0 + 200);
        await store.completeAttempts(
          [
            completion(retried as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0 + 200,
              nextAttemptAt: T0 + 5_000,
            }),
          ],
          T0 + 250,
        );
        await accept(a.id, 3, T0 + 1_200);
        const [ok, failed] = await claim(store, a.id, 3, T0 + 1_200);
        await store.completeAttempts(
          [completion(ok as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 1_200 })],
          T0 + 1_500,
        );
        await store.completeAttempts(
          [completion(failed as ClaimedDelivery, { status: 'dead', startedAt: T0 + 1_200 })],
          T0 + 1_600,
        );
        await accept(a.id, 1, T0 + 2_000);
        await attemptsAt(b.id, [T0 + 1_300], T0 + 1_300);

        assert.deepEqual(await store.countsFor(a.id, T0 + 1_000, T0 + 3_000), {
          pending: 2,
          inQueue: 1,
          oldestPendingAt: T0 + 200,
          delivered: 1,
          dead: 1,
        });
      });

      it('countsForMany: countsFor of each destination, in one call; an id with nothing, zeros', async () => {
        const a = await destination();
        const b = await destination();
        const idle = await destination();
        await accept(a.id, 3, T0 + 100);
        const [sent, died] = await claim(store, a.id, 2, T0 + 200);
        await store.completeAttempts(
          [
            completion(sent as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 200 }),
            completion(died as ClaimedDelivery, { status: 'dead', startedAt: T0 + 200 }),
          ],
          T0 + 300,
        );
        await accept(b.id, 2, T0 + 400);
        await claim(store, b.id, 1, T0 + 500);
        await attemptsAt(b.id, [T0 + 150], T0 + 150);

        const many = await store.countsForMany([a.id, b.id, idle.id], T0 + 100);
        assert.deepEqual([...many.keys()].sort(), [a.id, b.id, idle.id].sort());
        for (const id of [a.id, b.id, idle.id]) {
          assert.deepEqual(many.get(id), await store.countsFor(id, T0 + 100, T0 + 1_000), id);
        }
        assert.deepEqual(many.get(a.id), {
          pending: 1,
          inQueue: 0,
          oldestPendingAt: T0 + 100,
          delivered: 1,
          dead: 1,
        });
        assert.deepEqual(many.get(b.id), {
          pending: 1,
          inQueue: 1,
          oldestPendingAt: T0 + 400,
          delivered: 1,
          dead: 0,
        });
        assert.equal(
          (await store.countsForMany([b.id], T0 + 160)).get(b.id)?.delivered,
          0,
          'the span counts',
        );
        assert.deepEqual(await store.countsForMany([], T0), new Map());
      });
    });

    describe('listings', () => {
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
        for (const t of more) await store.createTenant(t, `hash-${t.id}`);
        const newestFirst = [...more.map((t) => t.id).reverse(), tenant.id];
        assert.deepEqual(await walk(2, (p) => store.listTenants(p)), newestFirst);
        assert.deepEqual(await walk(5, (p) => store.listTenants(p)), newestFirst);
        assert.deepEqual(await walk(100, (p) => store.listTenants(p)), newestFirst);
        const first = await store.listTenants({ limit: 1 });
        assert.deepEqual(first.items, [more[3]]);
        const fifth = await store.listTenants({ limit: 5, after: more[0]?.id });
        assert.deepEqual(fifth, { items: [tenant], next: null });
      });

      it('pageDestinations: newest first, deleted left out, one tenant or all', async () => {
        const a1 = await destination();
        const gone = await destination();
        const a2 = await destination();
        const other = newTenant();
        await store.createTenant(other, 'hash-other');
        const b1 = await store.createDestination(newDestination(other.id), T0);
        const a3 = await destination();
        await store.deleteDestination(gone.id, T0 + 1);
        assert.deepEqual(await walk(2, (p) => store.pageDestinations(tenant.id, p)), [a3.id, a2.id, a1.id]);
        assert.deepEqual(await walk(1, (p) => store.pageDestinations(undefined, p)), [
          a3.id,
          b1.id,
          a2.id,
          a1.id,
        ]);
        assert.deepEqual((await store.pageDestinations(other.id, { limit: 10 })).items, [b1]);
      });

      it('getEvent: the event as accepted and its deliveries', async () => {
        const a = await destination();
        const b = await destination();
        const [result] = await store.acceptEvents(
          tenant.id,
          [newEvent([b.id, a.id], { type: 'invoice.paid', payload: '{"x": 1}', idempotencyKey: 'inv-1' })],
          T0 + 9,
        );
        const found = await store.getEvent(result?.event.id as string);
        assert.deepEqual(found?.event, {
          id: result?.event.id,
          tenantId: tenant.id,
          type: 'invoice.paid',
          payload: '{"x": 1}',
          idempotencyKey: 'inv-1',
          createdAt: T0 + 9,
        });
        assert.deepEqual(
          found?.deliveries.map((d) => [d.id, d.destinationId, d.status]),
          result?.event.deliveries.map((d) => [d.id, d.destinationId, 'pending']),
        );
        assert.equal(await store.getEvent(newId('evt')), undefined);
      });

      it('listDeliveries: filtered by tenant, destination, event and status, newest first', async () => {
        const a = await destination();
        const b = await destination();
        const other = newTenant();
        await store.createTenant(other, 'hash-other');
        const theirs = await store.createDestination(newDestination(other.id), T0);
        const [first] = await store.acceptEvents(tenant.id, [newEvent([a.id])], T0);
        const [second] = await store.acceptEvents(tenant.id, [newEvent([a.id, b.id])], T0 + 1);
        const [their] = await store.acceptEvents(other.id, [newEvent([theirs.id])], T0 + 2);
        const [claimed] = await claim(store, a.id, 1, T0 + 5);
        const ids = (r: AcceptResult | undefined) => r?.event.deliveries.map((d) => d.id) ?? [];
        const [a1] = ids(first);
        const [a2, b2] = ids(second);
        assert.equal(claimed?.id, a1);

        const list = (filter: DeliveryFilter) => walk(1, (p) => store.listDeliveries(filter, p));
        assert.deepEqual(await list({ tenantId: tenant.id }), [b2, a2, a1]);
        assert.deepEqual(await list({}), [...ids(their), b2, a2, a1]);
        assert.deepEqual(await list({ destinationId: a.id }), [a2, a1]);
        assert.deepEqual(await list({ eventId: second?.event.id }), [b2, a2]);
        assert.deepEqual(await list({ tenantId: tenant.id, status: 'queued' }), [a1]);
        assert.deepEqual(await list({ destinationId: a.id, status: 'pending' }), [a2]);
        assert.deepEqual(await list({ tenantId: other.id, destinationId: a.id }), []);
        // Last changed at or after a time: a1 was claimed at T0 + 5.
        assert.deepEqual(await list({ tenantId: tenant.id, changedSince: T0 + 1 }), [b2, a2, a1]);
        assert.deepEqual(await list({ tenantId: tenant.id, changedSince: T0 + 2 }), [a1]);
        assert.deepEqual(await list({ changedSince: T0 + 6 }), []);
        const page = await store.listDeliveries({ destinationId: b.id }, { limit: 10 });
        assert.deepEqual(page, { items: [(await store.getDelivery(b2 as string))?.delivery], next: null });
      });
    });

    describe('replay, retry and retention', () => {
      /** Accepts `count` events for `destinationId` and fails each once, finally: dead at `at`. */
      const dieAt = async (destinationId: string, count: number, at: number): Promise<string[]> => {
        const ids = await accept(destinationId, count, at);
        const claimed = await claim(store, destinationId, count, at);
        await store.completeAttempts(
          claimed.map((c) => completion(c, { status: 'dead', startedAt: at })),
          at,
        );
        return ids;
      };

      it('replayDead: dead deliveries since a time back to pending, due now, with a fresh budget', async () => {
        const a = await destination();
        const b = await destination();
        const [early] = await dieAt(a.id, 1, T0 + 100);
        const [late] = await dieAt(a.id, 1, T0 + 500);
        const [elsewhere] = await dieAt(b.id, 1, T0 + 500);
        await accept(a.id, 1, T0 + 600);

        assert.equal(await store.replayDead(a.id, T0 + 500, T0 + 1_000), 1, 'died at or after since');
        const replayed = await store.getDelivery(late as string);
        assert.equal(replayed?.delivery.status, 'pending');
        assert.equal(replayed?.delivery.nextAttemptAt, T0 + 1_000);
        assert.equal(replayed?.delivery.attempts, 1);
        assert.equal(replayed?.delivery.attemptBase, 1);
        assert.equal(await statusOf(early as string), 'dead');

        assert.equal(await store.replayDead(a.id, null, T0 + 2_000), 1, 'null: every dead one');
        assert.equal(await statusOf(early as string), 'pending');
        assert.equal(await statusOf(elsewhere as string), 'dead', 'only that destination');
        assert.equal(await store.replayDead(a.id, null, T0 + 3_000), 0);

        const claimed = await claim(store, a.id, 10, T0 + 2_000);
        const again = claimed.find((c) => c.id === late);
        assert.equal(again?.attempts, 1);
        assert.equal(again?.attemptBase, 1);
        await store.completeAttempts(
          [completion(again as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 2_001 })],
          T0 + 2_010,
        );
        const done = await store.getDelivery(late as string);
        assert.deepEqual(
          done?.attempts.map((x) => x.attempt),
          [1, 2],
          'attempt numbers keep counting',
        );
      });

      it('retryDelivery: a dead or pending delivery is due now with a fresh budget; others conflict', async () => {
        const a = await destination();
        const [dead] = await dieAt(a.id, 1, T0 + 10);
        const [waiting, queued, delivered] = await accept(a.id, 3, T0 + 20);
        const claimed = await claim(store, a.id, 3, T0 + 20);
        await store.completeAttempts(
          [
            completion(claimed[0] as ClaimedDelivery, {
              status: 'pending',
              startedAt: T0 + 20,
              nextAttemptAt: T0 + 9_000,
            }),
            completion(claimed[2] as ClaimedDelivery, { status: 'delivered', startedAt: T0 + 20 }),
          ],
          T0 + 30,
        );
        const gone = await destination();
        const [cancelled] = await accept(gone.id, 1, T0);
        await store.deleteDestination(gone.id, T0 + 1);

        const retried = await store.retryDelivery(dead as string, T0 + 100);
        assert.equal(retried.ok, true);
        if (retried.ok) {
          assert.equal(retried.delivery.id, dead);
          assert.equal(retried.delivery.status, 'pending');
          assert.equal(retried.delivery.nextAttemptAt, T0 + 100);
          assert.equal(retried.delivery.attemptBase, 1);
          assert.equal(retried.delivery.attempts, 1);
          assert.deepEqual((await store.getDelivery(dead as string))?.delivery, retried.delivery);
        }
        const sooner = await store.retryDelivery(waiting as string, T0 + 100);
        assert.equal(sooner.ok && sooner.delivery.nextAttemptAt, T0 + 100);
        assert.equal(sooner.ok && sooner.delivery.attemptBase, 1);
        for (const id of [queued, delivered, cancelled]) {
          assert.deepEqual(await store.retryDelivery(id as string, T0 + 100), {
            ok: false,
            reason: 'conflict',
          });
        }
        assert.equal(await statusOf(queued as string), 'queued');
        assert.deepEqual(await store.retryDelivery(newId('dlv'), T0 + 100), {
          ok: false,
          reason: 'not_found',
        });
        assert.deepEqual(
          (await claim(store, a.id, 10, T0 + 100)).map((c) => c.id),
          [dead, waiting],
        );
      });

      // Pending work of a deleted destination never leaves `pending` (nothing ticks it), so
      // neither a retry nor a replay may create it (DESIGN I1: every accepted event ends).
      it('retryDelivery does not bring back a dead delivery of a deleted destination', async () => {
        const a = await destination();
        const [dead] = await dieAt(a.id, 1, T0 + 10);
        assert.equal(await store.deleteDestination(a.id, T0 + 20), true);
        const retried = await store.retryDelivery(dead as string, T0 + 30);
        assert.equal(retried.ok, false, `retryDelivery answered ${JSON.stringify(retried)}`);
        assert.notEqual(await statusOf(dead as string), 'pending');
      });

      it('replayDead does not bring back dead deliveries of a deleted destination', async () => {
        const a = await destination();
        const [dead] = await dieAt(a.id, 1, T0 + 10);
        assert.equal(await store.deleteDestination(a.id, T0 + 20), true);
        assert.equal(await store.replayDead(a.id, null, T0 + 30), 0);
        assert.notEqual(await statusOf(dead as string), 'pending');
      });

      it('deleteExpired: settled deliveries, their attempts and finished events, in batches', async () => {
        const a = await destination();
        const b = await destination();
        const gone = await destination();
        // Expired: delivered before the cutoff (with its attempt), and its event.
        const [oldDelivered] = await accept(a.id, 1, T0);
        await store.completeAttempts(
          (await claim(store, a.id, 1, T0)).map((c) => completion(c, { status: 'delivered', startedAt: T0 })),
          T0 + 100,
        );
        // Kept: dead deliveries stay until replayed.
        const [oldDead] = await dieAt(a.id, 1, T0 + 100);
        // Split: the delivery to a expires, the one to b is pending: the event stays.
        const [split] = await store.acceptEvents(tenant.id, [newEvent([a.id, b.id])], T0 + 200);
        await store.completeAttempts(
          (await claim(store, a.id, 1, T0 + 200)).map((c) =>
            completion(c, { status: 'delivered', startedAt: T0 + 200 }),
          ),
          T0 + 300,
        );
        // Expired: cancelled by a delete.
        const [cancelled] = await accept(gone.id, 1, T0 + 300);
        await store.deleteDestination(gone.id, T0 + 400);
        // Kept: delivered after the cutoff.
        const [recent] = await accept(a.id, 1, T0 + 500);
        await store.completeAttempts(
          (await claim(store, a.id, 1, T0 + 500)).map((c) =>
            completion(c, { status: 'delivered', startedAt: T0 + 500 }),
          ),
          T0 + 5_000,
        );
        const before = T0 + 1_000;

        const total: RetentionResult = { deliveries: 0, attempts: 0, events: 0, transitions: 0 };
        for (let i = 0; ; i++) {
          assert.ok(i < 10, 'retention ends');
          const done = await store.deleteExpired(before, 1);
          assert.ok(
            done.deliveries <= 1 && done.events <= 1,
            `at most one per batch: ${JSON.stringify(done)}`,
          );
          if (done.deliveries + done.attempts + done.events === 0) break;
          total.deliveries += done.deliveries;
          total.attempts += done.attempts;
          total.events += done.events;
        }
        assert.deepEqual(total, { deliveries: 3, attempts: 2, events: 2, transitions: 0 });

        assert.equal(await store.getDelivery(oldDelivered as string), undefined);
        assert.equal(await store.getDelivery(cancelled as string), undefined);
        assert.equal(await store.getDelivery(split?.event.deliveries[0]?.id as string), undefined);
        assert.equal(await statusOf(oldDead as string), 'dead');
        assert.equal(await statusOf(recent as string), 'delivered');
        assert.equal((await store.getDelivery(recent as string))?.attempts.length, 1);
        const stillThere = await store.getEvent(split?.event.id as string);
        assert.deepEqual(
          stillThere?.deliveries.map((d) => d.destinationId),
          [b.id],
        );
        assert.deepEqual(
          await store.attemptTimes(a.id, T0, T0 + 1_000),
          [T0 + 100, T0 + 500],
          'the kept deliveries keep their attempts',
        );
        assert.deepEqual(await store.deleteExpired(before, 100), {
          deliveries: 0,
          attempts: 0,
          events: 0,
          transitions: 0,
        });
      });
    });

    describe('lifecycle', () => {
      it('ping answers while open; close releases the store', async () => {
        await store.ping();
        await store.close();
        await assert.rejects(store.ping());
      });
    });

    orderingConformance(open);
  });
}

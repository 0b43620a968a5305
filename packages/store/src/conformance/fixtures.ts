/**
 * What every case of the Store conformance suite stands on: a fresh store per test with one
 * tenant (`useStore`), and the records the cases make. Every time is an explicit number from
 * T0: nothing here reads the wall clock.
 */

import assert from 'node:assert/strict';
import { afterEach, beforeEach } from 'node:test';
import { type DeliveryStatus, newId } from '@sluice/core';
import type {
  Attempt,
  ClaimedDelivery,
  CompletedAttempt,
  Destination,
  NewDestination,
  NewEvent,
  Store,
  Tenant,
} from '../index.ts';

/**
 * A fresh, empty, migrated store per test; `cleanup` releases it and must accept a store the
 * test has already closed. `rawSecrets`: a destination's `secrets` column as the database
 * holds it, as text, read past the store (what a dump or a replica shows). `fillDisk`: from
 * now on, a write that needs room (an event of 256 KiB, the readiness probe's write) fails
 * with the error the store's engine gives on a full disk, through its driver; resolves with
 * what makes room again.
 */
export type OpenStore = () => Promise<{
  store: Store;
  cleanup(): Promise<void>;
  rawSecrets(destinationId: string): Promise<string>;
  /** The destination's `auth` column as stored (JSON text), null when it has none. */
  rawAuth(destinationId: string): Promise<string | null>;
  fillDisk(): Promise<() => Promise<void>>;
}>;

export const T0 = 1_700_000_000_000;

export function newTenant(createdAt = T0): Tenant {
  return { id: newId('ten'), name: 'Acme', createdAt, quota: { eventsPerSecond: null, pendingEvents: null } };
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
    headers: {},
    auth: null,
    tls: null,
    filter: null,
    transform: null,
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

export function newEvent(destinationIds: string[], overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    type: 'order.created',
    payload: '{"order":1}',
    idempotencyKey: null,
    destinationIds,
    ...overrides,
  };
}

export interface Outcome {
  status: CompletedAttempt['status'];
  startedAt: number;
  nextAttemptAt?: number | null;
  statusCode?: number | null;
  errorCode?: string | null;
  disableDestination?: boolean;
}

/** The completion of the next attempt of a claimed delivery. */
export function completion(claimed: ClaimedDelivery, outcome: Outcome): CompletedAttempt {
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

export const byDestination = <T extends { destinationId: string }>(rows: T[]): T[] =>
  [...rows].sort((a, b) => a.destinationId.localeCompare(b.destinationId));

/** The store of the running test, its tenant, and the steps most cases take. */
export interface StoreCase {
  store: Store;
  tenant: Tenant;
  /** Creates a destination of the tenant (`newDestination` with these overrides). */
  destination(overrides?: Partial<NewDestination>, now?: number): Promise<Destination>;
  /** Accepts one event per item for `destinationId`; returns the delivery ids, in order. */
  accept(destinationId: string, count: number, now: number): Promise<string[]>;
  /** The deliveries a claim took (most cases look only at those). */
  claim(destinationId: string, max: number, now: number): Promise<ClaimedDelivery[]>;
  statusOf(deliveryId: string): Promise<DeliveryStatus | undefined>;
  /** Makes attempts for `destinationId` that started at `startedAts`, in that order. */
  attemptsAt(destinationId: string, startedAts: number[], now: number): Promise<void>;
}

/**
 * Opens a store with a tenant before each test of the enclosing `describe` and cleans it up
 * after: the returned case's `store` and `tenant` are the running test's.
 */
export function useStore(open: OpenStore): StoreCase {
  let cleanup: () => Promise<void> = async () => {};
  const c: StoreCase = {
    store: undefined as unknown as Store,
    tenant: newTenant(),
    destination: (overrides = {}, now = T0) =>
      c.store.createDestination(newDestination(c.tenant.id, overrides), now),
    accept: async (destinationId, count, now) => {
      const events = Array.from({ length: count }, (_, i) =>
        newEvent([destinationId], { payload: `{"n":${i}}` }),
      );
      const results = await c.store.acceptEvents(c.tenant.id, events, now);
      return results.map((r) => r.event.deliveries[0]?.id ?? assert.fail('no delivery'));
    },
    claim: async (destinationId, max, now) => (await c.store.claimDue(destinationId, max, now)).deliveries,
    statusOf: async (deliveryId) => (await c.store.getDelivery(deliveryId))?.delivery.status,
    attemptsAt: async (destinationId, startedAts, now) => {
      await c.accept(destinationId, startedAts.length, now);
      const claimed = await c.claim(destinationId, startedAts.length, now);
      assert.equal(claimed.length, startedAts.length);
      await c.store.completeAttempts(
        claimed.map((d, i) => completion(d, { status: 'delivered', startedAt: startedAts[i] ?? 0 })),
        now,
      );
    },
  };
  beforeEach(async () => {
    ({ store: c.store, cleanup } = await open());
    c.tenant = newTenant();
    await c.store.createTenant(c.tenant, `hash-${c.tenant.id}`);
  });
  afterEach(async () => {
    await cleanup();
  });
  return c;
}

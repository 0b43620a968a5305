import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import type { Store } from '@sluice/store';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from '@sluice/store-sqlite';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Alerter } from './alerter.ts';

const T0 = 1_700_000_000_000;

/** Every rate-limiter replica runs an Alerter over the one store; here, two over one SQLite file. */
function alerter(store: Store): Alerter {
  return new Alerter({
    store,
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
    clock: () => T0 + 1_000,
    thresholds: { pendingCount: 3, pendingAgeSeconds: null },
    intervalMs: 100,
    notify: false,
    wake: () => undefined,
  });
}

describe('backlog alerts across replicas', () => {
  it("a replica never resolves another's alert on a sample older than the raise", async () => {
    const store = new SqliteStore(':memory:', { keyring: newKeyring() });
    const tenantId = newId('ten');
    await store.createTenant({ id: tenantId, name: 'Acme', createdAt: T0 }, 'hash');
    const destination = await store.createDestination(newDestination(tenantId), T0);
    // Replica B's reads are slow to come back: whatever it reads before the gate opens is what
    // the store held then (a sample), the firing alerts are read when they run.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow: Store = Object.create(store, {
      backlogSamples: {
        value: async (...args: Parameters<Store['backlogSamples']>) => {
          const sample = await store.backlogSamples(...args);
          await gate;
          return sample;
        },
      },
      listAlerts: {
        value: async () => {
          await gate;
          return store.listAlerts();
        },
      },
    });
    const b = alerter(slow).evaluate();
    // Meanwhile a backlog builds and replica A raises its alert.
    await store.acceptEvents(
      tenantId,
      Array.from({ length: 6 }, (_, n) => ({
        type: 'order.paid',
        payload: `{"n":${n}}`,
        idempotencyKey: null,
        destinationIds: [destination.id],
      })),
      T0,
    );
    assert.deepEqual(
      (await alerter(store).evaluate()).map((c) => c.action),
      ['raise'],
    );
    open();
    assert.deepEqual(await b, [], 'B changes nothing: the backlog is still there');
    assert.equal((await store.listAlerts()).length, 1);
    await store.close();
  });
});

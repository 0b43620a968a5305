import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from '@sluice/store-sqlite';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { DestinationCache } from '../destination-cache.ts';
import { EngineMetrics } from '../ops/metrics.ts';
import { Pacer } from '../pace/memory-pacing.ts';
import { recoverFromStore } from '../sweep/recovery.ts';
import { sweepOnce } from '../sweep/sweeper.ts';
import { MemorySchedule } from '../tick/memory-schedule.ts';
import { memoryRecoveryPorts, memorySweepPorts } from './memory-ports.ts';

const T0 = 1_700_000_000_000;
const LEASE_MS = 120_000;

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** The single box's state over a real store at `now`; its schedule's timers an hour off, so no tick runs. */
async function box(now: number) {
  const store = new SqliteStore(':memory:', { keyring: newKeyring() });
  const tenantId = newId('ten');
  await store.createTenant({ id: tenantId, name: 'Acme', createdAt: T0 }, 'hash');
  const destination = newDestination(tenantId);
  await store.createDestination(destination, T0);
  const clock = () => now;
  const schedule = new MemorySchedule({
    clock: () => T0 - 3_600_000,
    tick: async () => null,
    onTickError: () => undefined,
  });
  const pacer = new Pacer({ marginMs: 5, arrivalBoundMs: 250 });
  const memory = { store, schedule, pacer, destinations: new DestinationCache(store, 100), clock };
  const metrics = new EngineMetrics(
    new Registry(),
    () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
    async () => null,
  );
  closing.push(async () => {
    await schedule.stop();
    await store.close();
  });
  const accept = (at: number) =>
    store.acceptEvents(
      tenantId,
      [{ type: 'order.created', payload: '{}', idempotencyKey: null, destinationIds: [destination.id] }],
      at,
    );
  return { store, schedule, pacer, memory, metrics, id: destination.id, accept };
}

describe("the single box's adapters", () => {
  it('the sweep wakes pending work the schedule lost, returns a claim its queue does not hold past the lease, and forgets idle pace', async () => {
    const now = T0 + 10 * LEASE_MS;
    const b = await box(now);
    await b.accept(T0);
    await b.accept(T0);
    await b.store.claimDue(b.id, 1, T0 + 1); // a claim left by a crash: in no queue
    b.pacer.of('dst_gone', 1_000); // nothing in it, no schedule entry
    const live = new Set<string>();
    const ports = memorySweepPorts(b.memory, {
      live,
      leaseMs: LEASE_MS,
      logger: pino({ level: 'silent' }),
      metrics: b.metrics,
    });
    assert.deepEqual(await sweepOnce(ports), { rewoken: 1, requeued: 1, orphans: 0 });
    assert.equal(b.schedule.dueOf(b.id), T0, 'woken at its earliest due time');
    assert.equal(b.pacer.peek('dst_gone'), undefined, 'idle pace forgotten');
    assert.deepEqual(
      await sweepOnce(ports),
      { rewoken: 0, requeued: 0, orphans: 0 },
      'nothing left to repair',
    );
  });

  it('the rebuild at start returns every claim, counted as sent now and as an attempt, and schedules the work', async () => {
    const now = T0 + 1_000;
    const b = await box(now);
    await b.accept(T0);
    await b.accept(T0);
    const claimed = await b.store.claimDue(b.id, 2, T0 + 1);
    assert.equal(claimed.deliveries.length, 2);
    assert.deepEqual(await recoverFromStore(memoryRecoveryPorts(b.memory), now), {
      requeued: 2,
      scheduled: 1,
    });
    assert.equal(b.pacer.peek(b.id)?.window.count(now), 2, 'both count against the window');
    assert.equal(b.schedule.dueOf(b.id), now, 'due now: returned claims are due at once');
    const again = await b.store.getDelivery(claimed.deliveries[0]?.id as string);
    assert.equal(again?.delivery.status, 'pending');
    assert.equal(again?.delivery.attempts, 1, 'counted as an attempt made');
  });
});

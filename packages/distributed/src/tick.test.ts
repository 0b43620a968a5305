/**
 * When a tick plans its destination's next run (packages/engine/src/tick/tick.ts), on the
 * distributed parts: a real store (SQLite, in memory), the Redis pace state and the BullMQ
 * delivery queue, on a clock the test moves.
 */

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import { type AttemptPace, createTick, EngineMetrics, TENANT_HELD_RECHECK_MS } from '@sluice/engine';
import { BullPublisher, bullConnection, markStateBuilt } from '@sluice/redis';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from '@sluice/store-sqlite';
import { cleanup, REDIS_TARGET, requireRedis, uniquePrefix } from '@sluice/testing';
import { Registry } from 'prom-client';
import { openRedisState } from './redis-state.ts';

await requireRedis();

const T0 = 1_700_000_000_000;
/** `SLUICE_TICK_LEAD_MS`'s default. */
const LEAD_MS = 100;

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/**
 * One destination at `limit` a second; `tick(at)` runs its tick with the clock at `at`;
 * `maxInFlight`: the fair bound's ceiling (absent: none).
 */
async function rig(limit: number, maxInFlight?: number, tenantHeld?: (tenantId: string) => boolean) {
  const prefix = uniquePrefix();
  const store = new SqliteStore(':memory:', { keyring: newKeyring() });
  const tenantId = newId('ten');
  await store.createTenant({ id: tenantId, name: 'Acme', createdAt: T0 }, 'hash');
  const destination = await store.createDestination(
    newDestination(tenantId, { rateLimit: { limit, period: 'second' } }),
    T0,
  );
  const shared = await openRedisState({
    store,
    redis: REDIS_TARGET,
    shards: 1,
    prefix,
    windowMarginMs: 25,
    arrivalBoundMs: 250,
    destinationCacheSize: 100,
  });
  await markStateBuilt(shared.redis, shared.keys); // the state is built (no loss of Redis)
  const publisher = new BullPublisher({ connection: bullConnection(REDIS_TARGET), keys: shared.keys });
  let now = T0;
  /** Requests started and not answered (`sendQueued` with no latency). */
  const open: AttemptPace[] = [];
  const tick = createTick({
    store,
    destinations: shared.destinations,
    pacing: shared.pacing,
    publisher,
    leadMs: LEAD_MS,
    metrics: new EngineMetrics(
      new Registry(),
      () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
      async () => null,
    ),
    clock: () => now,
    maxInFlight,
    tenantHeld,
  });
  closing.push(async () => {
    await publisher.close();
    await cleanup(shared.redis, prefix);
    await cleanup(shared.redis, `${prefix}-bull`);
    await shared.close();
    await store.close();
  });
  const id = destination.id;
  return {
    tick: (at: number) => {
      now = at;
      return tick(id, at);
    },
    accept: (count: number, at: number) =>
      store.acceptEvents(
        tenantId,
        Array.from({ length: count }, () => ({
          type: 'order.created',
          payload: '{}',
          idempotencyKey: null,
          destinationIds: [id],
        })),
        at,
      ),
    /**
     * Every published delivery's request starts at `at` and is answered `latencyMs` later
     * (default 5; null: never), as a worker's.
     */
    sendQueued: async (at: number, latencyMs: number | null = 5) => {
      const queued = await shared.redis.zrange(shared.keys.queued(id), '0', '-1');
      for (const deliveryId of queued) {
        const pace = await shared.pacing.start(id, deliveryId, 1_000, 10_000, at);
        if (latencyMs !== null) await pace?.finished(at + latencyMs);
        else if (pace) open.push(pace);
      }
      return queued.length;
    },
    /** Answers every request in flight but the first `keep`, at `at`. */
    answerAllBut: async (keep: number, at: number) => {
      for (const pace of open.splice(keep)) await pace.finished(at);
    },
    /** Jobs in the delivery queue: one per tick that published here. */
    jobs: () => publisher.queues[0]!.count(),
    /** The deliveries in the delivery queue's jobs. */
    published: async () => {
      const jobs = await publisher.queues[0]!.getJobs(['wait']);
      return jobs.flatMap((job) => ('deliveries' in job.data ? job.data.deliveries : [job.data]));
    },
  };
}

describe('a tick plans the next run', () => {
  it('none when everything due went out and nothing is pending, though a send is queued or in the window', async () => {
    const r = await rig(10);
    await r.accept(1, T0);
    assert.equal(await r.tick(T0), null, 'a lone event: shut down with its send still queued');
    assert.equal(await r.sendQueued(T0), 1);
    // 500 ms later a second event wakes the destination: one send is in its window, so the
    // window term (10 − 1) is below the per-run one (10), yet it held nothing back.
    await r.accept(1, T0 + 500);
    assert.equal(await r.tick(T0 + 500), null, 'no tick 10 ms later: nothing waits for the window');
    assert.equal(await r.jobs(), 2);
  });

  it('an interval on when everything due went out and more is pending for later', async () => {
    const r = await rig(10);
    await r.accept(1, T0);
    await r.accept(1, T0 + 5_000);
    assert.equal(await r.tick(T0), T0 + 5_000, 'the next run when the pending one is due');
    assert.equal(await r.jobs(), 1);
  });

  it('a lead before the window has room when the window held work back, and publishes ahead of it', async () => {
    const r = await rig(2);
    await r.accept(3, T0);
    // A full run: an interval on (the lead before the two can leave the window is sooner).
    assert.equal(await r.tick(T0), T0 + 1_000);
    assert.equal(await r.sendQueued(T0), 2);
    // Two sends answered at T0 + 5 fill the window until T0 + 5 + 1_000 + 25.
    const next = await r.tick(T0 + 500);
    assert.equal(await r.jobs(), 1, 'the third waits for the window: no second job');
    assert.equal(next, T0 + 1_030 - LEAD_MS);
    // Then both slots free within the lead: the third is published now, to start as they free.
    await r.tick(next);
    assert.equal(await r.jobs(), 2);
    const ahead = (await r.published()).filter((d) => d.notBefore !== undefined);
    assert.deepEqual(
      ahead.map((d) => d.notBefore),
      [T0 + 1_030],
      'the third alone, its request waiting for its slot',
    );
  });
});

describe("a tenant's share held by slow requests everywhere (tenant-holds.ts)", () => {
  it('publishes nothing and looks again soon; once the share frees, publishes as before', async () => {
    let held = true;
    let asked: string | undefined;
    const r = await rig(10, undefined, (tenantId) => {
      asked = tenantId;
      return held;
    });
    await r.accept(3, T0);
    assert.equal(await r.tick(T0), T0 + TENANT_HELD_RECHECK_MS, 'looked at again soon');
    assert.match(asked ?? '', /^ten_/, "asked of the destination's tenant");
    assert.equal(await r.jobs(), 0, 'nothing published');
    held = false;
    assert.equal(await r.tick(T0 + TENANT_HELD_RECHECK_MS), null, 'everything due went out');
    assert.equal((await r.published()).length, 3);
  });
});

describe('the fair bound on requests in flight (docs/adr/0014)', () => {
  it('a fast receiver gets its whole run; one that stops answering is held to the ceiling', async () => {
    const r = await rig(50, 8);
    await r.accept(400, T0);
    // Not answered yet: the ceiling, then a look again soon (10 ms: nothing has waited).
    assert.equal(await r.tick(T0), T0 + 10);
    assert.equal(await r.sendQueued(T0, 5), 8, 'the ceiling before its first answer');
    // It answered in 5 ms: the rest of its window (50 − 8), past the ceiling.
    await r.tick(T0 + 10);
    assert.equal(await r.sendQueued(T0 + 10, null), 42, 'a fast receiver is never slowed');
    // Its 42 hang: after half an interval it is no longer fast, and 42 ≥ the ceiling.
    await r.tick(T0 + 1_010);
    assert.equal(await r.sendQueued(T0 + 1_010, null), 0, 'at its bound: nothing more');
  });

  it('one slow request among answers that keep coming does not bound a fast receiver', async () => {
    const r = await rig(50, 8);
    await r.accept(200, T0);
    await r.tick(T0);
    assert.equal(await r.sendQueued(T0, 5), 8);
    await r.tick(T0 + 10);
    assert.equal(await r.sendQueued(T0 + 10, null), 42, 'one of them hangs: the rest answer below');
    // A second later the window has room again and the hanging request is 1 s old: one slow
    // request among quick answers is not a stall. Still fast: its whole run.
    await r.answerAllBut(1, T0 + 20);
    await r.tick(T0 + 1_100);
    assert.equal(await r.sendQueued(T0 + 1_100, 5), 49, 'its run, less the hanging one in the window');
  });
});

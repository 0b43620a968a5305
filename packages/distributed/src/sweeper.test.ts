import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { newId, newKeyring, ratePlan } from '@sluice/core';
import { EngineMetrics } from '@sluice/engine';
import { BullPublisher, bullConnection } from '@sluice/redis';
import type { NewDestination, Store } from '@sluice/store';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from '@sluice/store-sqlite';
import { cleanup, connect, REDIS_TARGET, requireRedis, uniquePrefix } from '@sluice/testing';
import pino from 'pino';
import { Registry } from 'prom-client';
import { openRedisState, type RedisState } from './redis-state.ts';
import { DistributedSweeper } from './sweeper.ts';

/** The settings' defaults (SLUICE_WINDOW_MARGIN_MS, …_ARRIVAL_BOUND_MS, …_DESTINATION_CACHE_SIZE). */
const SETTINGS = { windowMarginMs: 5, arrivalBoundMs: 250, destinationCacheSize: 100_000 };

await requireRedis();

const T0 = 1_700_000_000_000;

interface Rig {
  store: SqliteStore;
  shared: RedisState;
  sweeper: DistributedSweeper;
  destinationId: string;
  /** What the sweeper warned. */
  warnings: Record<string, unknown>[];
  /** `sluice_sweeper_repairs_total` by kind, the kinds it counted (each is exported from 0). */
  repairs(): Promise<Record<string, number>>;
  /** Accepts one event for the destination at `at`: one pending delivery due then. */
  accept(at: number): Promise<void>;
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/**
 * The sweeper over a real store (SQLite, in memory) and real Redis. `store` wraps the one the
 * sweeper reads, to make a tick run at a chosen moment of its sweep.
 */
async function rig(
  wrap: (store: SqliteStore, r: Omit<Rig, 'sweeper'>) => Store = (s) => s,
  now = T0 + 1_000,
): Promise<Rig> {
  const prefix = uniquePrefix();
  const store = new SqliteStore(':memory:', { keyring: newKeyring() });
  const tenantId = newId('ten');
  await store.createTenant({ id: tenantId, name: 'Acme', createdAt: T0 }, 'hash');
  const destination: NewDestination = newDestination(tenantId);
  await store.createDestination(destination, T0);
  const shared = await openRedisState({ store, redis: REDIS_TARGET, prefix, shards: 1, ...SETTINGS });
  const publisher = new BullPublisher({ connection: bullConnection(REDIS_TARGET), keys: shared.keys });
  const warnings: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  const accept = async (at: number) => {
    await store.acceptEvents(
      tenantId,
      [{ type: 'order.created', payload: '{}', idempotencyKey: null, destinationIds: [destination.id] }],
      at,
    );
  };
  const metrics = new EngineMetrics(
    new Registry(),
    () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
    async () => null,
  );
  const repairs = async () =>
    Object.fromEntries(
      (await metrics.repairs.get()).values
        .filter((v) => v.value > 0)
        .map((v) => [String(v.labels.kind), v.value]),
    );
  const r = { store, shared, destinationId: destination.id, warnings, repairs, accept };
  const sweeper = new DistributedSweeper({
    store: wrap(store, r),
    redis: shared.redis,
    keys: shared.keys,
    schedule: shared.schedule,
    pacing: shared.pacing,
    publisher,
    destinations: shared.destinations,
    logger,
    metrics,
    clock: () => now,
    leaseMs: 300_000,
    unstartedLeaseMs: 10_000,
  });
  closing.push(async () => {
    await sweeper.stop();
    await publisher.close();
    await cleanup(shared.redis, prefix);
    await cleanup(shared.redis, `${prefix}-bull`);
    await shared.close();
    await store.close();
  });
  await sweeper.recoverIfLost(); // a first start: nothing to rebuild
  warnings.length = 0;
  return { ...r, sweeper };
}

/** The store as the sweeper sees it when `tick` runs right after it lists the pending work. */
function tickAfterListing(store: SqliteStore, tick: () => Promise<void>): Store {
  const racing: Store = Object.create(store);
  racing.pendingDestinations = async () => {
    const listed = await store.pendingDestinations();
    await tick();
    return listed;
  };
  return racing;
}

describe('DistributedSweeper', () => {
  it('wakes a destination whose pending work has no schedule entry, and says so', async () => {
    const r = await rig();
    await r.accept(T0); // its wake was lost
    await r.sweeper.sweep();
    assert.equal(await r.shared.schedule.isScheduled(r.destinationId), true);
    assert.deepEqual(
      r.warnings.map((w) => [w.msg, w.rewoken]),
      [['sweeper repaired the schedule', 1]],
    );
    assert.deepEqual(await r.repairs(), { rewoken: 1 });
  });

  it('leaves alone, and does not warn of, a destination whose tick took its work after the listing', async () => {
    // Under load: the pending row is listed, then its tick claims the work and leaves the
    // schedule (nothing left pending) before the sweeper asks the schedule.
    const r = await rig((store, r) =>
      tickAfterListing(store, async () => {
        await store.claimDue(r.destinationId, 10, T0 + 1_000);
      }),
    );
    await r.accept(T0);
    await r.sweeper.sweep();
    assert.deepEqual(r.warnings, [], 'nothing was repaired');
    assert.deepEqual(await r.repairs(), {});
    assert.equal(await r.shared.schedule.isScheduled(r.destinationId), false, 'idle is free (I4)');
  });

  it('returns a run whose tick died before publishing it, and forgets it was queued', async () => {
    // A tick claimed three deliveries and counted them as queued; its replica died before
    // the publish. Past the lease they go back to pending, and must no longer count as
    // queued: a full run counted forever would stop its destination. Between the sweep's
    // requeue and its next step a tick claims one of them again and counts it: that stays.
    const now = T0 + 400_000;
    const plan = ratePlan({ limit: 10, period: 'second' });
    let tickMeanwhile = async (): Promise<void> => {};
    const r = await rig((store) => {
      const racing: Store = Object.create(store);
      racing.requeue = async (claimedBefore, keep, at) => {
        const requeued = await store.requeue(claimedBefore, keep, at);
        await tickMeanwhile();
        return requeued;
      };
      return racing;
    }, now);
    for (let i = 0; i < 3; i++) await r.accept(T0);
    const run = (await r.store.claimDue(r.destinationId, 10, T0 + 10)).deliveries.map((d) => d.id);
    await r.shared.pacing.published(r.destinationId, run, plan, T0 + 10);
    tickMeanwhile = async () => {
      const again = (await r.store.claimDue(r.destinationId, 1, now)).deliveries.map((d) => d.id);
      assert.equal(again.length, 1);
      await r.shared.pacing.published(r.destinationId, again, plan, now);
    };
    assert.equal((await r.shared.pacing.read(r.destinationId, 1_000, now)).queued, 3, 'the dead run counts');
    await r.sweeper.sweep();
    assert.deepEqual(
      r.warnings.map((w) => [w.msg, w.requeued]),
      [['sweeper repaired the schedule', 3]],
    );
    assert.deepEqual(await r.repairs(), { requeued: 3 }, 'sluice_sweeper_repairs_total');
    assert.equal(
      (await r.shared.pacing.read(r.destinationId, 1_000, now)).queued,
      1,
      'only the delivery a tick counted again after the requeue',
    );
  });

  it("returns a dead tick's claims after the unstarted lease, but not while a tick of the destination runs", async () => {
    // A tick (the API's, say) claimed two deliveries and died before publishing them: no job
    // holds them, so no request of theirs started. They come back after the short lease,
    // not the long one — unless a tick of the destination runs now (it publishes before it
    // settles).
    const now = T0 + 20_000;
    const r = await rig(undefined, now);
    await r.accept(T0);
    await r.accept(T0);
    await r.store.claimDue(r.destinationId, 10, T0 + 10);
    const { keys, redis } = r.shared;
    const leases = keys.leases(keys.shardOf(r.destinationId));
    await redis.zadd(leases, now + 5_000, r.destinationId);
    await r.sweeper.sweep();
    assert.deepEqual(await r.repairs(), {}, "a running tick's claims stay");
    await redis.zadd(leases, now - 1, r.destinationId); // its replica died: the lease expired
    await r.sweeper.sweep();
    assert.deepEqual(await r.repairs(), { requeued: 2 });
    assert.equal((await r.store.destinationWork(r.destinationId)).inQueue, 0);
  });

  it('after a loss of Redis: returns the claims that have no job, counts them, and kicks the limiters', async () => {
    const r = await rig();
    await r.accept(T0);
    await r.accept(T0);
    await r.store.claimDue(r.destinationId, 10, T0 + 10); // published in a Redis now lost
    const listener = connect();
    const kicks: string[] = [];
    closing.push(async () => listener.disconnect());
    await listener.subscribe(r.shared.keys.kickChannel());
    listener.on('message', (_channel, message) => kicks.push(message));
    await r.shared.redis.del(r.shared.keys.epoch());
    assert.equal(await r.sweeper.recoverIfLost(), true, 'rebuilt');
    assert.deepEqual(await r.repairs(), { requeued: 2 });
    assert.equal(
      (await r.store.destinationWork(r.destinationId)).nextPendingAt,
      T0 + 1_000,
      'pending, due now',
    );
    // The wakes kick too, but while the state is not ready: the loops that saw that sleep on.
    for (let i = 0; i < 50 && !kicks.includes('*'); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(kicks.includes('*'), `the limiters were told the state is ready (kicks: ${kicks.join()})`);
  });

  it("after one shard's state was lost (its node back empty, epoch elsewhere): rebuilds, once", async () => {
    const r = await rig();
    await r.accept(T0);
    await r.store.claimDue(r.destinationId, 10, T0 + 10); // published in the shard now lost
    const { redis, keys } = r.shared;
    await redis.del(keys.built(keys.shardOf(r.destinationId)));
    assert.equal(await redis.get(keys.epoch()), 'ready', 'the epoch survived');
    assert.equal(await r.sweeper.recoverIfLost(), true, 'rebuilt');
    assert.deepEqual(await r.repairs(), { requeued: 1 });
    assert.equal(await redis.exists(keys.built(keys.shardOf(r.destinationId))), 1, 'marked built again');
    assert.equal(await redis.exists(keys.rebuild()), 0, 'the claim to rebuild released');
    assert.equal(await r.sweeper.recoverIfLost(), false, 'nothing lost now');
  });

  it('wakes work that became pending after the listing, without counting it as a repair', async () => {
    // The tick took the listed work; an ingest then added more, and its own wake may not have
    // landed yet: the sweeper's wake is harmless, and not a lost wake-up.
    const r = await rig((store, r) =>
      tickAfterListing(store, async () => {
        await store.claimDue(r.destinationId, 10, T0 + 1_000);
        await r.accept(T0 + 500);
      }),
    );
    await r.accept(T0);
    await r.sweeper.sweep();
    assert.equal(await r.shared.schedule.isScheduled(r.destinationId), true, 'never a missed wake');
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(await r.repairs(), {}, 'not counted as a repair');
  });
});
